// Browser guide: a task's steps in order (HAS_STEP, NEXT) and its episodes. :param taskId.
MATCH (t:Task {tenant: $tenant, id: $taskId})
OPTIONAL MATCH steps = (t)-[:HAS_STEP]->(:Step {tenant: $tenant})
OPTIONAL MATCH chain = (:Step {tenant: $tenant})-[:NEXT]->(:Step {tenant: $tenant})<-[:HAS_STEP]-(t)
OPTIONAL MATCH episodes = (:Episode {tenant: $tenant})-[:OF_TASK]->(t)
RETURN t, steps, chain, episodes
