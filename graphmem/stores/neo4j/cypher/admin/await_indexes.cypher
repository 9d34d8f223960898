// Block until every index is online (after migrate creates them).
CALL db.awaitIndexes($timeoutSeconds)
