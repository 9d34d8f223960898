// forgetUser: the ids of tasks the user holds now (owner = userId, as an export of the
// user lists them), a page at a time; each is forgotten as forgetTask does, without a
// handle, so the next page is the next tasks left.
MATCH (t:Task {tenant: $tenant, owner: $userId})
RETURN t.id AS id
ORDER BY t.id
LIMIT $limit
