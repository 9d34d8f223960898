// A tenant's erasure receipts, newest first, a page at a time; with $userId, those whose
// subject was that user or one of their sessions or memories.
MATCH (r:ErasureReceipt {tenant: $tenant})
WHERE ($userId IS NULL OR r.userId = $userId)
  AND ($before IS NULL OR r.at < $before OR (r.at = $before AND r.id < $beforeId))
RETURN r.id AS id, r.document AS document, r.at AS at
ORDER BY r.at DESC, r.id DESC
LIMIT $limit
