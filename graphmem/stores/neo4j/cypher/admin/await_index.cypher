// Block until one index is online (a tenant's fulltext index, just created).
CALL db.awaitIndex($name, $timeoutSeconds)
