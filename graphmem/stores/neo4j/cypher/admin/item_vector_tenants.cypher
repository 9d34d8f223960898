// Tenants holding store items whose vector has waited since $before or earlier (a put's
// own process embeds them within milliseconds; these were left by one that died). Lists
// tenant ids only, for the sweep to visit each (item/vectors_due).
MATCH (n:StoreItem)
WHERE n.vectorDue <= $before
RETURN DISTINCT n.tenant AS tenant
LIMIT $first
