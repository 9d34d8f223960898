// A task exported from another tenant (or database), with its steps, hand-overs and
// episodes, as they were: ids are new, times and handles are kept, but an episode is
// recorded here now ($now), as an imported memory is. MERGE on the import
// id (unique per tenant) makes a rerun find the task instead of adding it again; an
// existing one is returned unchanged ($created false). Nothing is written, and no row
// returned, for a task forgotten here (a tombstone on its import id, the id it had) or
// of a user forgotten after the task was created (the tombstones' own rule).
OPTIONAL MATCH (gone:Tombstone {tenant: $tenant, kind: 'task', subject: $importId})
OPTIONAL MATCH (left:Tombstone {tenant: $tenant, kind: 'user', subject: $owner})
WITH gone, left
WHERE gone IS NULL AND (left IS NULL OR left.at < $createdAt)
MERGE (t:Task {tenant: $tenant, importId: $importId})
ON CREATE SET t.id = $id, t.description = $description, t.status = $status,
              t.owner = $owner, t.generation = $generation, t.createdAt = $createdAt,
              t.completedAt = $completedAt
WITH t, t.id = $id AS created
CALL (t, created) {
  WITH t, created WHERE created
  SET t.embeddingModel = $model
  WITH t
  CALL db.create.setNodeVectorProperty(t, 'embedding', $embedding)
  CALL (t) {
    UNWIND $steps AS s
    CREATE (n:Step {tenant: $tenant, id: s.id, action: s.action, result: s.result,
                    status: s.status, startedAt: s.startedAt, endedAt: s.endedAt,
                    order: s.order, owner: s.owner, generation: s.generation})
    CREATE (t)-[:HAS_STEP {order: s.order}]->(n)
  }
  CALL (t) {
    UNWIND $links AS link
    MATCH (a:Step {tenant: $tenant, id: link[0]}), (b:Step {tenant: $tenant, id: link[1]})
    CREATE (a)-[:NEXT]->(b)
  }
  CALL (t) {
    UNWIND $transfers AS x
    CREATE (t)-[:TRANSFERRED]->(:Transfer {tenant: $tenant, id: x.id, taskId: t.id,
            fromOwner: x.fromOwner, toOwner: x.toOwner, fromGeneration: x.fromGeneration,
            toGeneration: x.toGeneration, reason: x.reason, at: x.at})
  }
  CALL (t) {
    UNWIND $episodes AS e
    CREATE (n:Episode {tenant: $tenant, id: e.id, taskId: t.id, description: e.description,
                       outcome: e.outcome, success: e.success, signature: e.signature,
                       lessons: e.lessons, metrics: e.metrics, mappings: e.mappings,
                       createdAt: e.createdAt, recordedAt: $now, embeddingModel: $model})
    CREATE (n)-[:OF_TASK]->(t)
    WITH n, e
    CALL db.create.setNodeVectorProperty(n, 'embedding', e.embedding)
  }
}
RETURN t {.*, embedding: null} AS task, created
