// How many LangGraph store items of a user the graph holds: the receipt's count before
// forgetUser and its verification after (store_item_user index).
MATCH (n:StoreItem {tenant: $tenant, userId: $userId})
RETURN count(n) AS items
