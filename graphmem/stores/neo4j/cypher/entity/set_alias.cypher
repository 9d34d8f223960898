// Record that a normalised name (or, for splits, an exact lower-cased surface form)
// resolves to another canonical name within the tenant.
MERGE (a:EntityAlias {tenant: $tenant, alias: $alias})
SET a.canonical = $canonical, a.kind = $kind, a.at = $now
RETURN a.alias AS alias
