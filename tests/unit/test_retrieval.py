"""The Lucene query recall builds: terms, and scope clauses that filter without scoring."""

from __future__ import annotations

from graphmem.models import query_scope_tokens, scope_token, scope_tokens
from graphmem.retrieval import lucene_query


def test_scope_tokens_name_tenant_session_and_user_apart() -> None:
    both = scope_tokens("acme", "s1", "u1").split()
    assert both[0] == scope_token("acme")
    assert len(both) == 3 and len(set(both)) == 3
    assert all(t.isalnum() for t in both)
    assert scope_tokens("acme", user_id="u1").split()[1] == both[2]
    assert scope_tokens("other", "s1", "u1").split()[1:] != both[1:]  # per tenant
    assert scope_tokens("acme") == scope_token("acme")


def test_lucene_query_requires_every_scope_token_with_zero_boost() -> None:
    scope = query_scope_tokens("acme", "s1", "u1")
    query = lucene_query("Where did the trip to Paris go?", scope)
    assert query is not None
    assert query.startswith("content:(trip OR paris OR go)")
    assert len(scope.split()) == 2
    for token in scope.split():
        assert f"AND scopeToken:{token}^0" in query


def test_a_search_does_not_require_the_tenant_token_of_its_own_index() -> None:
    # the index is the tenant's (models.tenant_fulltext): its token would filter nothing
    assert scope_token("acme") not in query_scope_tokens("acme", "s1", "u1")
    assert query_scope_tokens("acme", user_id="u1") == scope_tokens("acme", user_id="u1").split()[1]
    assert (
        lucene_query("the trip to Paris", query_scope_tokens("acme")) == "content:(trip OR paris)"
    )


def test_lucene_query_of_stopwords_only_is_none() -> None:
    assert lucene_query("what is it?", scope_tokens("acme")) is None
