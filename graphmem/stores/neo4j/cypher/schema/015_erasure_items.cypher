// forgetUser finds a user's LangGraph store items by (tenant, userId) (erasure/user_items_*).
CREATE INDEX store_item_user IF NOT EXISTS FOR (n:StoreItem) ON (n.tenant, n.userId);
