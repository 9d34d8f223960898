// Hand a task to its next owner (ownership transfer, docs/concepts.md#primitive). The SET takes the task's
// write lock before the handle is checked, so of two concurrent transfers from the same
// generation exactly one wins; the loser sees the new generation and is refused.
// A task being forgotten (its tombstone, written under the same lock) is not found.
MATCH (t:Task {tenant: $tenant, id: $taskId})
SET t.lockedAt = $now
WITH t
WHERE NOT EXISTS { (:Tombstone {tenant: $tenant, kind: 'task', subject: $taskId}) }
WITH t, t.owner AS owner, coalesce(t.generation, 1) AS generation
CALL (t, owner, generation) {
  WITH t, owner, generation
  WHERE coalesce(owner, '') = coalesce($fromOwner, '') AND generation = $generation
  SET t.owner = $toOwner, t.generation = generation + 1
  CREATE (t)-[:TRANSFERRED]->(:Transfer {tenant: $tenant, id: $id, taskId: t.id,
          fromOwner: owner, toOwner: $toOwner, fromGeneration: generation,
          toGeneration: generation + 1, reason: $reason, at: $now})
  RETURN true AS moved
  UNION
  WITH t, owner, generation
  WHERE NOT (coalesce(owner, '') = coalesce($fromOwner, '') AND generation = $generation)
  RETURN false AS moved
}
RETURN moved, t.owner AS owner, t.generation AS generation
