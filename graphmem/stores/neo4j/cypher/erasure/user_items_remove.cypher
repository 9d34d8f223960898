// forgetUser: a batch of the user's LangGraph store items (those put under the namespace
// ("users", userId, ...), item/write sets their userId), with their vector and fulltext
// index entries; run until it removes none, so no transaction holds many locks.
MATCH (n:StoreItem {tenant: $tenant, userId: $userId})
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS removed
