// forgetTask's first step, in one transaction: the task's write lock (add_step,
// record_episode and transfer_task take it before they check for a tombstone), the
// handle checked when $checkHandle (an owned task is forgotten only by its current
// owner and generation, as it takes steps), then the tombstones: the task's id, the id
// it was imported under (an import of the old export carries that one) and its
// episodes' ids (a reflect that read them before cannot write what it drew from them).
MATCH (t:Task {tenant: $tenant, id: $taskId})
SET t.lockedAt = $at
WITH t, t.owner AS owner, coalesce(t.generation, 1) AS generation
WITH t, owner, generation,
     (NOT $checkHandle OR owner IS NULL
      OR (owner = $owner AND generation = $generation)) AS held
CALL (t, held) {
  WITH t WHERE held
  MERGE (:Tenant {id: $tenant})
  WITH t
  UNWIND [[t.id, 'task'], [t.importId, 'task']]
         + [(e:Episode)-[:OF_TASK]->(t) | [e.id, 'episode']] AS mark
  WITH mark WHERE mark[0] IS NOT NULL
  MERGE (m:Tombstone {tenant: $tenant, kind: mark[1], subject: mark[0]})
    ON CREATE SET m.at = $at, m.expiresAt = $expiresAt
    ON MATCH SET m.at = CASE WHEN m.at < $at THEN $at ELSE m.at END,
                 m.expiresAt = CASE WHEN m.expiresAt < $expiresAt THEN $expiresAt
                                    ELSE m.expiresAt END
  RETURN count(m) AS tombstones
}
RETURN held, owner, generation, t.importId AS importId, tombstones
