"""Adversarial tenancy: tenant A fills every kind of memory, then tenant B, under the same
client-chosen names (session, user, agent, schema) and with A's server-made ids (memories,
entities, tasks, steps, episodes, records, merges), tries every operation of schema.graphql,
the four tier MCP tools, the nine MCP memory-server tools (the knowledge graph) and the
change feed.

The oracle:

* A's whole footprint — every Neo4j node and relationship of tenant A with all properties,
  and every Redis key naming A with its contents — is dumped as canonical JSON before B's
  attempts, after each attempt and at the end, and must never change;
* no response to B carries any of A's content, secrets or ids (other than ids B sent);
* B gets NOT_FOUND / FORBIDDEN, an empty answer, or exactly what it got before A wrote
  anything (aggregate reads: stats, status, search ...), never A's data;
* B's subscriptions hear nothing while A acts.

``ATTEMPTS`` below is the table of cross-tenant attempts (the coverage a reader checks).
"""

# ruff: noqa: E501 -- the attempt table and seed documents read best one per line

from __future__ import annotations

import asyncio
import base64
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
import pytest
import websockets
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from graphmem.api import mcp_graph_tools
from tests.conftest import ROOT, LiveApi, Stack, free_port, new_tenant

pytestmark = pytest.mark.timeout(600)

# --- names both tenants use --------------------------------------------------------------
SESSION = "shared-session"
USER = "shared-user"
AGENT = "shared-agent"
SCHEMA = "shared-schema"
SIG = "sig-shared"
A_ONLY_SESSION = "a-only-session"
A_ONLY_USER = "a-only-user"
A_ONLY_AGENT = "a-only-agent"
A_ONLY_SCHEMA = "a-only-schema"
#: store items (LangGraph's namespaces): one both tenants use, one only A does
NS = '["shared", "ns"]'
A_ONLY_NS = '["a-only", "ns"]'

TAG = uuid.uuid4().hex[:8]


def secret(n: str) -> str:
    """A fragment only A ever writes; B never sends it, so it may never come back to B."""
    return f"S3CR3T-{n}-{TAG}"


A_TEXT = {
    "ada": f"Ada Lovelace works at Acme in London. Ref {secret('ada')}.",
    "babbage": f"Charles Babbage met Ada Lovelace in London. Ref {secret('babbage')}.",
    "paris": f"Dinner at Le Chat Noir in Paris near the Eiffel Tower. Ref {secret('paris')}.",
    "budget": f"The zephyr budget code is {secret('budget')} for the quarterly plan.",
    "hot": f"Zephyr hot note {secret('hot')} stays in the hot tier.",
    "only": f"Zephyr note {secret('only')} lives in the a-only session.",
    "forgotten": f"Zephyr ephemeral {secret('forgotten')} is forgotten.",
    "lt": f"Zephyr long-term memory {secret('lt')} via remember.",
    "entity": f"Grace Ada Lovelace visited Acme in London again. Ref {secret('entity')}.",
}
A_STRINGS = [
    *A_TEXT.values(),
    *(secret(n) for n in ("trait", "trait2", "role", "role2", "task", "task2", "step")),
    *(secret(n) for n in ("episode", "episode2", "lesson", "map", "record", "record2")),
    *(secret(n) for n in ("wm", "msg", "msg2", "stm", "epi3", "rec3", "wm2", "step2")),
    *(secret(n) for n in ("item", "item2")),
    # A's entity names as A wrote them (B only ever sends lower-case keys)
    "Ada Lovelace",
    "Acme",
    "London",
    "Charles Babbage",
    "Eiffel Tower",
    "Paris",
    *(secret(k + "-meta") for k in A_TEXT),
    *(secret(n) for n in ("kgobs", "kgobs2", "kgname", "kgrel")),
    TAG,  # in every secret of A, in any case; B never sends it
]
# the knowledge graph of the MCP memory-server tools: one entity name both tenants use,
# one only A has (and B later creates as its own), and A's relation type
KG_SHARED = "Shared Entity"
KG_A_ONLY = f"A-only {secret('kgname')}"
KG_A_REL = f"rel-{secret('kgrel')}"


def kg_ent(name: str, kind: str, *obs: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(obs)}


def kg_rel(a: str, b: str, kind: str) -> dict[str, str]:
    return {"from": a, "to": b, "relationType": kind}


def no_graph(v: Any) -> bool:
    return v["entities"] == [] and v["relations"] == []


def done_ok(v: Any) -> bool:
    return v.get("success") is True


QUERY = "zephyr budget ada lovelace acme london s3cr3t"

B_TEXT = "B note about the zephyr budget of team bee"

# --- GraphQL documents ---------------------------------------------------------------------
ITEM = "id sessionId userId content type tier accessCount tokenCount metadata"
SCORED = f"item {{ {ITEM} }} score similarity"
ENTITY = "id name type aliases mentionCount mergedFrom"
DETAIL = f"""entity {{ {ENTITY} }} mentions {{ memoryId content surface via userId }}
  relations {{ type direction otherId otherName sources closedBy }} cooccurring {{ otherId weight }}"""
STEP = "id action result status order owner generation"
OWNED = "items { task { id description owner generation } episodes { id outcome } } next"
TASK = f"id description status owner generation steps {{ {STEP} }} episodeIds transfers {{ fromOwner toOwner fromGeneration toGeneration reason }}"
EPISODE = "id taskId description outcome success signature lessons metrics mappings"
SEPISODE = f"episode {{ {EPISODE} }} similarity cosine signatureMatch"
REFLECTION = "id kind pattern support confidence signature details evidence"
PERSONA = f"agentId role tone expertise constraints learnedTraits {{ {SCORED} }} prompt source"
RECORD = "id schema data"
#: reads at a moment that sees everything recorded, A's included were they not fenced
FAR_MOMENT = 'asOf: "2999-01-01T00:00:00Z", validAt: "2999-01-01T00:00:00Z", includeHistory: true'
STORE_ITEM = "namespace key valueJson createdAt updatedAt score"
MESSAGE = "role content timestamp"
STATUS = "sessionId hot { items tokens limit utilizationPercent } warm { items tokens } cold { items tokens } suggestions { type reason itemIds }"
CONFIG = "sessionId hotTokenLimit warmAccessThreshold promoteThreshold maxColdItems autoSpillEnabled autoPromoteEnabled spillCount"
RECALL = f"items {{ {ITEM} }} promoted scores {{ itemId score similarity }} hotHits {{ {SCORED} }}"
RETRIEVED = f"""working shortTerm {{ {MESSAGE} }} longTerm {{ {SCORED} }} persona {{ {PERSONA} }}
  episodic {{ {SEPISODE} }} entities {{ entity {{ {ENTITY} }} count }} structured {{ {RECORD} }}"""
REMEMBER = f"kind memoryId episodeId recordId message {{ {MESSAGE} }} working"
ALL_KINDS = "[WORKING, SHORT_TERM, LONG_TERM, PERSONA, EPISODIC, ENTITY, STRUCTURED]"


def q(op: str, args: str, selection: str = "", *, mutation: bool = False) -> str:
    body = f"{op}{args}" + (f" {{ {selection} }}" if selection else "")
    return ("mutation " if mutation else "query ") + "{ " + body + " }"


def m(op: str, args: str, selection: str = "") -> str:
    return q(op, args, selection, mutation=True)


# --- the attempts --------------------------------------------------------------------------
# expect:
#   denied  - a GraphQL error NOT_FOUND or FORBIDDEN (MCP: error NOT_FOUND/FORBIDDEN)
#   nothing - null / false / [] / {} / zero counts (checked by `check`)
#   same    - exactly what B got before A wrote anything (scores and times aside)
#   own     - succeeds, touching only B's namespace (the snapshots prove it)
# Every attempt is also checked for A's strings and ids in the response.


@dataclass
class Attempt:
    name: str
    op: str  # the schema field, MCP tool or subscription
    doc: Callable[[dict[str, Any]], str]  # ids of A → GraphQL document (or MCP args JSON)
    expect: str
    check: Callable[[Any], bool] | None = None  # on `data[op]` (or the MCP result)
    via: str = "graphql"  # graphql | mcp | ws


def A(text: str) -> Callable[[dict[str, Any]], str]:
    """A document template with {ids} of A filled in."""

    def fill(ids: dict[str, Any]) -> str:
        return re.sub(r"<(\w+)>", lambda g: str(ids[g.group(1)]), text)

    return fill


def const(text: str) -> Callable[[dict[str, Any]], str]:
    return lambda _ids: text


def empty(value: Any) -> bool:
    return value in (None, [], {}, False, 0)


def zero_status(value: Any) -> bool:
    return all(value[t]["items"] == 0 for t in ("hot", "warm", "cold"))


def no_items(value: Any) -> bool:
    return value["items"] == [] and value["promoted"] == [] and value["hotHits"] == []


def counts_zero(value: Any) -> bool:
    return all(v == 0 for v in value.values())


# fmt: off
ATTEMPTS: list[Attempt] = [
    # ---- pure reads: B sees what it saw before A existed -------------------------------
    Attempt("hot(shared session)", "hot", const(q("hot", f'(sessionId: "{SESSION}")', ITEM)), "same"),
    Attempt("erasureReceipts(tenant-wide)", "erasureReceipts", const(q("erasureReceipts", "(limit: 100)", "items { id subject document } next")), "same"),
    Attempt("erasureReceipts(A-only user)", "erasureReceipts", const(q("erasureReceipts", f'(userId: "{A_ONLY_USER}")', "items { id document }")), "nothing", lambda v: v["items"] == []),
    Attempt("hot(A-only session)", "hot", const(q("hot", f'(sessionId: "{A_ONLY_SESSION}")', ITEM)), "nothing", empty),
    Attempt("hot(A's persona session)", "hot", const(q("hot", f'(sessionId: "persona.{A_ONLY_AGENT}")', ITEM)), "nothing", empty),
    Attempt("memory(A's hot id)", "memory", A(q("memory", '(itemId: "<hot>")', ITEM)), "nothing", empty),
    Attempt("memory(A's spilled id)", "memory", A(q("memory", '(itemId: "<budget>")', ITEM)), "nothing", empty),
    Attempt("memory(A's entity memory id)", "memory", A(q("memory", '(itemId: "<ada>")', ITEM)), "nothing", empty),
    Attempt("memory(A's persona trait id)", "memory", A(q("memory", '(itemId: "<trait>")', ITEM)), "nothing", empty),
    Attempt("stats()", "stats", const(q("stats", "", "tier type items tokens bytes")), "same"),
    # B's own write-behind counts; `workers` is over all tenants by design, so not asked
    Attempt("enrichment()", "enrichment", const(q("enrichment", "", "enabled waiting parked")), "same"),
    Attempt("stats(shared session)", "stats", const(q("stats", f'(sessionId: "{SESSION}")', "tier type items tokens bytes")), "same"),
    Attempt("stats(shared user)", "stats", const(q("stats", f'(userId: "{USER}")', "tier type items tokens bytes")), "same"),
    Attempt("stats(A-only session)", "stats", const(q("stats", f'(sessionId: "{A_ONLY_SESSION}")', "tier type items tokens bytes")), "same"),
    Attempt("find(tenant-wide)", "find", const(q("find", '(text: "zephyr", limit: 100)', ITEM)), "same"),
    Attempt("find(shared session, A's words)", "find", const(q("find", f'(text: "lovelace", sessionId: "{SESSION}")', ITEM)), "same"),
    Attempt("find(shared user, secret prefix)", "find", const(q("find", f'(text: "s3cr3t", userId: "{USER}")', ITEM)), "same"),
    Attempt("memories(shared session)", "memories", const(q("memories", f'(sessionId: "{SESSION}")', f"items {{ {ITEM} }} next")), "same"),
    Attempt("memories(A-only session)", "memories", const(q("memories", f'(sessionId: "{A_ONLY_SESSION}")', f"items {{ {ITEM} }} next")), "nothing", lambda v: v["items"] == []),
    Attempt("memories(A's metadata key)", "memories", const(q("memories", f'(userId: "{A_ONLY_USER}", metadataField: "ref", metadataValues: ["s3cr3t"])', f"items {{ {ITEM} }}")), "nothing", lambda v: v["items"] == []),
    Attempt("sessions(tenant-wide)", "sessions", const(q("sessions", "", "")), "same"),
    Attempt("sessions(A-only prefix)", "sessions", const(q("sessions", f'(prefix: "{A_ONLY_SESSION}")', "")), "nothing", empty),
    Attempt("sessionConfig(shared session)", "sessionConfig", const(q("sessionConfig", f'(sessionId: "{SESSION}")', CONFIG)), "same"),
    Attempt("sessionConfig(A-only session)", "sessionConfig", const(q("sessionConfig", f'(sessionId: "{A_ONLY_SESSION}")', CONFIG)), "same"),
    Attempt("memoryStatus(shared session)", "memoryStatus", const(q("memoryStatus", f'(sessionId: "{SESSION}")', STATUS)), "same"),
    Attempt("memoryStatus(A-only session)", "memoryStatus", const(q("memoryStatus", f'(sessionId: "{A_ONLY_SESSION}")', STATUS)), "nothing", zero_status),
    Attempt("search(tenant-wide, HYBRID)", "search", const(q("search", f'(query: "{QUERY}", limit: 50)', SCORED)), "same"),
    Attempt("search(shared session, VECTOR)", "search", const(q("search", f'(query: "{QUERY}", sessionId: "{SESSION}", retriever: VECTOR, limit: 50)', SCORED)), "same"),
    Attempt("search(shared user, FULLTEXT)", "search", const(q("search", f'(query: "{QUERY}", userId: "{USER}", retriever: FULLTEXT, limit: 50)', SCORED)), "same"),
    Attempt("search(A-only session, HYBRID)", "search", const(q("search", f'(query: "{QUERY}", sessionId: "{A_ONLY_SESSION}")', SCORED)), "nothing", empty),
    Attempt("search(A's persona user, by type)", "search", const(q("search", f'(query: "trait", userId: "agent.{AGENT}", types: [PREFERENCE, FACT])', SCORED)), "same"),
    Attempt("entities(shared user)", "entities", const(q("entities", f'(userId: "{USER}")', f"entity {{ {ENTITY} }} count")), "same"),
    Attempt("entities(A-only user, PERSON)", "entities", const(q("entities", f'(userId: "{A_ONLY_USER}", type: PERSON)', f"entity {{ {ENTITY} }} count")), "nothing", empty),
    Attempt("entity(A's person id)", "entity", const(q("entity", '(id: "PERSON|ada lovelace")', DETAIL)), "denied"),
    Attempt("entity(A's second person id)", "entity", A(q("entity", '(id: "<ent2>")', DETAIL)), "denied"),
    Attempt("entity(A's merge target)", "entity", A(q("entity", '(id: "<merge_target>")', DETAIL)), "denied"),
    Attempt("task(A's task)", "task", A(q("task", '(id: "<task>")', TASK)), "denied"),
    Attempt("task(A's owned, transferred task)", "task", A(q("task", '(id: "<owned_task>")', TASK)), "denied"),
    Attempt("task(A's episode-made task)", "task", A(q("task", '(id: "<episode_task>")', TASK)), "denied"),
    Attempt("similarEpisodes(query)", "similarEpisodes", const(q("similarEpisodes", f'(query: "{QUERY}", limit: 50)', SEPISODE)), "same"),
    Attempt("tasks(A's owner)", "tasks", const(q("tasks", '(owner: "pipe-2", first: 500)', OWNED)), "same"),
    Attempt("similarEpisodes(A's signature)", "similarEpisodes", const(q("similarEpisodes", f'(query: "deploy", signature: "{SIG}")', SEPISODE)), "same"),
    Attempt("priorKnowledge(query)", "priorKnowledge", const(q("priorKnowledge", f'(query: "{QUERY}")', f"votes {{ key value confidence votes alternatives }} episodes {{ {SEPISODE} }}")), "same"),
    Attempt("priorKnowledge(signature, validValues)", "priorKnowledge", const(q("priorKnowledge", f'(query: "deploy", signature: "{SIG}", validValues: ["x"])', f"votes {{ key value }} episodes {{ {SEPISODE} }}")), "same"),
    Attempt("priorKnowledge(at a far moment, history)", "priorKnowledge", const(q("priorKnowledge", f'(query: "deploy", signature: "{SIG}", {FAR_MOMENT})', f"votes {{ key value }} episodes {{ {SEPISODE} }}")), "same"),
    Attempt("similarEpisodes(at a far moment, history)", "similarEpisodes", const(q("similarEpisodes", f'(query: "{QUERY}", limit: 50, {FAR_MOMENT})', SEPISODE)), "same"),
    Attempt("reflections()", "reflections", const(q("reflections", "", REFLECTION)), "same"),
    Attempt("reflections(A's signature)", "reflections", const(q("reflections", f'(signature: "{SIG}")', REFLECTION)), "same"),
    Attempt("workingMemory(A's task)", "workingMemory", A(q("workingMemory", '(taskId: "<task>")')), "nothing", empty),
    Attempt("conversation(shared session)", "conversation", const(q("conversation", f'(sessionId: "{SESSION}", last: 50)', MESSAGE)), "same"),
    Attempt("conversation(A-only session)", "conversation", const(q("conversation", f'(sessionId: "{A_ONLY_SESSION}")', MESSAGE)), "nothing", empty),
    Attempt("persona(shared agent)", "persona", const(q("persona", f'(agentId: "{AGENT}", query: "{QUERY}", limit: 20)', PERSONA)), "same"),
    Attempt("persona(A-only agent)", "persona", const(q("persona", f'(agentId: "{A_ONLY_AGENT}")', PERSONA)), "denied"),
    Attempt("records(shared schema)", "records", const(q("records", f'(schema: "{SCHEMA}", limit: 1000)', RECORD)), "same"),
    Attempt("records(shared schema, A's where)", "records", const(q("records", f'(schema: "{SCHEMA}", where: {{code: "zephyr"}})', RECORD)), "same"),
    Attempt("records(shared schema, asOf far ahead)", "records", const(q("records", f'(schema: "{SCHEMA}", limit: 1000, asOf: "9999-12-31T23:59:59-18:00")', f"{RECORD} recordedAt")), "same"),
    Attempt("records(A-only schema, asOf far ahead)", "records", const(q("records", f'(schema: "{A_ONLY_SCHEMA}", asOf: "2999-01-01T00:00:00Z")', RECORD)), "nothing", empty),
    Attempt("records(A-only schema)", "records", const(q("records", f'(schema: "{A_ONLY_SCHEMA}")', RECORD)), "nothing", empty),
    Attempt("retrieve(every kind, shared names, A's task)", "retrieve", A(q("retrieve", f'(query: "{QUERY}", kinds: {ALL_KINDS}, sessionId: "{SESSION}", userId: "{USER}", taskId: "<task>", agentId: "{AGENT}", schema: "{SCHEMA}", limit: 50)', RETRIEVED)), "same"),
    Attempt("retrieve(A-only names)", "retrieve", const(q("retrieve", f'(query: "{QUERY}", sessionId: "{A_ONLY_SESSION}", userId: "{A_ONLY_USER}", schema: "{A_ONLY_SCHEMA}", kinds: [SHORT_TERM, LONG_TERM, ENTITY, STRUCTURED])', RETRIEVED)), "nothing", lambda v: all(empty(x) for x in v.values())),
    Attempt("items(shared namespace, A's key)", "items", const(q("items", f'(keys: [{{namespace: {NS}, key: "a-key"}}, {{namespace: {A_ONLY_NS}, key: "a-key"}}])', STORE_ITEM)), "nothing", lambda v: v == [None, None]),
    Attempt("searchItems(shared namespace, A's words)", "searchItems", const(q("searchItems", f'(namespacePrefix: {NS}, query: "{QUERY}", limit: 50)', STORE_ITEM)), "same"),
    Attempt("searchItems(A-only namespace)", "searchItems", const(q("searchItems", f'(namespacePrefix: ["a-only"], query: "{QUERY}")', STORE_ITEM)), "nothing", empty),
    Attempt("searchItems(every namespace, A's filter)", "searchItems", const(q("searchItems", '(namespacePrefix: [], filter: {kind: "zephyr"}, limit: 100)', STORE_ITEM)), "same"),
    Attempt("itemNamespaces()", "itemNamespaces", const(q("itemNamespaces", "(limit: 100)")), "same"),
    Attempt("itemNamespaces(A-only prefix)", "itemNamespaces", const(q("itemNamespaces", '(prefix: ["a-only"])')), "nothing", empty),
    Attempt("storeItems(shared namespace)", "storeItems", const(q("storeItems", f"(namespacePrefix: {NS}, first: 100)", STORE_ITEM)), "same"),
    Attempt("storeItems(A-only namespace, after A's key)", "storeItems", const(q("storeItems", f'(namespacePrefix: ["a-only"], after: {{namespace: {A_ONLY_NS}, key: ""}})', STORE_ITEM)), "nothing", empty),
    Attempt("knowledgeGraph()", "knowledgeGraph", const(q("knowledgeGraph", "(limit: 500)", "entities { name entityType observations } relations { from to relationType } truncated")), "same"),
    # ---- MCP tools -------------------------------------------------------------------
    Attempt("MCP memory_status(shared session)", "memory_status", const(json.dumps({"sessionId": SESSION})), "same", via="mcp"),
    Attempt("MCP memory_status(A-only session)", "memory_status", const(json.dumps({"sessionId": A_ONLY_SESSION})), "nothing", zero_status, via="mcp"),
    Attempt("MCP memory_recall(A-only session)", "memory_recall", const(json.dumps({"sessionId": A_ONLY_SESSION, "query": QUERY, "limit": 20})), "nothing", no_items, via="mcp"),
    Attempt("MCP memory_recall(A-only session, at a far moment, history)", "memory_recall", const(json.dumps({"sessionId": A_ONLY_SESSION, "query": QUERY, "limit": 20, "autoPromote": False, "asOf": "2999-01-01T00:00:00+00:00", "validAt": "2999-01-01T00:00:00+00:00", "includeHistory": True})), "nothing", no_items, via="mcp"),
    Attempt("MCP memory_recall(shared session)", "memory_recall", const(json.dumps({"sessionId": SESSION, "query": QUERY, "limit": 20, "autoPromote": True})), "own", via="mcp"),
    Attempt("MCP memory_spill(A-only session)", "memory_spill", const(json.dumps({"sessionId": A_ONLY_SESSION})), "nothing", lambda v: v["spilledCount"] == 0, via="mcp"),
    Attempt("MCP memory_spill(shared session, count 100)", "memory_spill", const(json.dumps({"sessionId": SESSION, "count": 100})), "own", via="mcp"),
    Attempt("MCP memory_add(A-only session)", "memory_add", const(json.dumps({"sessionId": A_ONLY_SESSION, "content": "B via MCP", "type": "fact"})), "own", via="mcp"),
    # ---- MCP memory-server tools (the knowledge graph): reads first, B's writes after ----
    Attempt("MCP read_graph", "read_graph", const("{}"), "same", via="mcp"),
    Attempt("MCP search_nodes(A's observation)", "search_nodes", const(json.dumps({"query": secret("kgobs")})), "nothing", no_graph, via="mcp"),
    Attempt("MCP search_nodes(everything)", "search_nodes", const(json.dumps({"query": ""})), "same", via="mcp"),
    Attempt("MCP open_nodes(shared and A-only names)", "open_nodes", const(json.dumps({"names": [KG_SHARED, KG_A_ONLY]})), "same", via="mcp"),
    Attempt("MCP create_relations(to A's entity)", "create_relations", const(json.dumps({"relations": [kg_rel(KG_SHARED, KG_A_ONLY, KG_A_REL)]})), "denied", via="mcp"),
    Attempt("MCP add_observations(A's entity)", "add_observations", const(json.dumps({"observations": [{"entityName": KG_A_ONLY, "contents": ["B was here"]}]})), "denied", via="mcp"),
    Attempt("MCP delete_observations(A's observations)", "delete_observations", const(json.dumps({"deletions": [{"entityName": KG_SHARED, "observations": [secret("kgobs")]}, {"entityName": KG_A_ONLY, "observations": [secret("kgobs2")]}]})), "own", done_ok, via="mcp"),
    Attempt("MCP delete_relations(A's relations)", "delete_relations", const(json.dumps({"relations": [kg_rel(KG_SHARED, KG_A_ONLY, KG_A_REL), kg_rel(KG_A_ONLY, KG_SHARED, "knows")]})), "own", done_ok, via="mcp"),
    Attempt("MCP delete_entities(A's entities)", "delete_entities", const(json.dumps({"entityNames": [KG_A_ONLY, KG_SHARED]})), "own", done_ok, via="mcp"),
    Attempt("MCP create_entities(A's names)", "create_entities", const(json.dumps({"entities": [kg_ent(KG_SHARED, "person"), kg_ent(KG_A_ONLY, "project")]})), "own", lambda v: [e["name"] for e in v["entities"]] == [KG_SHARED, KG_A_ONLY], via="mcp"),
    Attempt("MCP add_observations(B's own, A's name)", "add_observations", const(json.dumps({"observations": [{"entityName": KG_A_ONLY, "contents": ["B's own"]}]})), "own", lambda v: v["results"][0]["addedObservations"] == ["B's own"], via="mcp"),
    Attempt("MCP create_relations(B's own, A's names)", "create_relations", const(json.dumps({"relations": [kg_rel(KG_SHARED, KG_A_ONLY, KG_A_REL)]})), "own", lambda v: len(v["relations"]) == 1, via="mcp"),
    Attempt("mergeKnowledgeGraph(B's own, A's names)", "mergeKnowledgeGraph", const(m("mergeKnowledgeGraph", f'(entities: [{{name: "{KG_A_ONLY}", entityType: "project", observations: ["B merged"]}}], relations: [{{from: "{KG_A_ONLY}", to: "{KG_SHARED}", relationType: "merged"}}])', "entitiesCreated observationsAdded relationsCreated")), "own", lambda v: v == {"entitiesCreated": 0, "observationsAdded": 1, "relationsCreated": 1}),
    # ---- writes with A's ids: refused --------------------------------------------------
    Attempt("spill(shared session, A's hot id)", "spill", A(m("spill", f'(sessionId: "{SESSION}", itemIds: ["<hot>"])', "spilledCount spilledIds")), "denied"),
    Attempt("spill(A-only session, A's id)", "spill", A(m("spill", f'(sessionId: "{A_ONLY_SESSION}", itemIds: ["<only>"])', "spilledCount")), "denied"),
    Attempt("promote(A's spilled id)", "promote", A(m("promote", '(itemId: "<budget>")', ITEM)), "denied"),
    Attempt("promote(A's hot id)", "promote", A(m("promote", '(itemId: "<hot>")', ITEM)), "denied"),
    Attempt("promote(A's persona trait)", "promote", A(m("promote", '(itemId: "<trait>")', ITEM)), "denied"),
    Attempt("forget(A's hot id)", "forget", A(m("forget", '(itemId: "<hot>")')), "nothing", empty),
    Attempt("forget(A's spilled id)", "forget", A(m("forget", '(itemId: "<budget>")')), "nothing", empty),
    Attempt("forget(A's entity memory)", "forget", A(m("forget", '(itemId: "<ada>")')), "nothing", empty),
    Attempt("forget(A's record id)", "forget", A(m("forget", '(itemId: "<record>")')), "nothing", empty),
    Attempt("retract(A's spilled and hot ids)", "retract", A(m("retract", '(itemIds: ["<budget>", "<hot>"], reason: "b")', "itemIds changedIds")), "denied"),
    Attempt("retract(A's record id)", "retract", A(m("retract", '(itemIds: ["<record>"])', "changedIds")), "denied"),
    Attempt("unretract(A's spilled id)", "unretract", A(m("unretract", '(itemIds: ["<budget>"])', "itemIds changedIds")), "denied"),
    Attempt("forgetMemories(A's ids)", "forgetMemories", A(m("forgetMemories", '(itemIds: ["<hot>", "<budget>", "<ada>", "<record>"])', "hotMemories graphMemories entities receipt { subject clean }")), "nothing", lambda v: v["hotMemories"] == v["graphMemories"] == v["entities"] == 0),
    Attempt("forgetSession(A-only session)", "forgetSession", const(m("forgetSession", f'(sessionId: "{A_ONLY_SESSION}")', "hotMemories graphMemories sessions messages entities")), "own"),
    Attempt("restoreErasureReceipt(A's tenant)", "restoreErasureReceipt", const(m("restoreErasureReceipt", '(receipt: {version: 1, id: "rcpt_forged", tenant: "t-a-named", subject: {kind: "user", userId: "ada"}, at: "2025-01-01T00:00:00+00:00"})')), "denied"),
    Attempt("mergeEntities(A's two entities)", "mergeEntities", A(m("mergeEntities", '(sourceId: "<ent1>", targetId: "<ent2>", reason: "b")', "mergeId sourceId targetId")), "denied"),
    Attempt("mergeEntities(A's merge source into its target)", "mergeEntities", A(m("mergeEntities", '(sourceId: "<merge_source>", targetId: "<merge_target>")', "mergeId")), "denied"),
    Attempt("undoMerge(A's merge id)", "undoMerge", A(m("undoMerge", '(mergeId: "<merge>")', "mergeId sourceId targetId")), "denied"),
    Attempt("splitEntity(A's merge target, A's surface)", "splitEntity", A(m("splitEntity", '(id: "<merge_target>", surface: "<merge_surface>")')), "denied"),
    Attempt("splitEntity(A's person, a name)", "splitEntity", const(m("splitEntity", '(id: "PERSON|ada lovelace", surface: "ada")')), "denied"),
    Attempt("addStep(A's task)", "addStep", A(m("addStep", '(taskId: "<task>", input: {action: "b step"})', STEP)), "denied"),
    Attempt("addStep(A's owned task, current handle)", "addStep", A(m("addStep", '(taskId: "<owned_task>", input: {action: "b"}, owner: "pipe-2", generation: 2)', STEP)), "denied"),
    Attempt("transferTask(A's task, current handle)", "transferTask", A(m("transferTask", '(taskId: "<owned_task>", fromOwner: "pipe-2", toOwner: "b", generation: 2)', "taskId owner generation")), "denied"),
    Attempt("transferTask(A's unowned task)", "transferTask", A(m("transferTask", '(taskId: "<task>", toOwner: "b", generation: 1)', "owner generation")), "denied"),
    Attempt("completeTask(A's task)", "completeTask", A(m("completeTask", '(taskId: "<task>", status: "hijacked")', TASK)), "denied"),
    Attempt("completeTask(A's episode-made task)", "completeTask", A(m("completeTask", '(taskId: "<episode_task>")', "id status")), "denied"),
    Attempt("forgetTask(A's task)", "forgetTask", A(m("forgetTask", '(taskId: "<task>")', "tasks steps episodes workingMemory receipt { subject clean }")), "denied"),
    Attempt("forgetTask(A's owned task, current handle)", "forgetTask", A(m("forgetTask", '(taskId: "<owned_task>", owner: "pipe-2", generation: 2)', "tasks steps transfers episodes")), "denied"),
    Attempt("forgetTask(A's episode-made task)", "forgetTask", A(m("forgetTask", '(taskId: "<episode_task>")', "tasks episodes reflections")), "denied"),
    Attempt("forgetRecords(A's record id)", "forgetRecords", A(m("forgetRecords", '(ids: ["<record>", "<task>"])', "records receipt { subject removed clean }")), "nothing", lambda v: v["records"] == 0),
    Attempt("recordEpisode(on A's task)", "recordEpisode", A(m("recordEpisode", '(input: {taskId: "<task>", outcome: "b", success: true, signature: "sig-shared"})', EPISODE)), "denied"),
    Attempt("remember(EPISODIC on A's task)", "remember", A(m("remember", '(input: {kind: EPISODIC, content: "b", taskId: "<owned_task>"})', REMEMBER)), "denied"),
    Attempt("remember(STRUCTURED, A-only schema)", "remember", const(m("remember", f'(input: {{kind: STRUCTURED, schema: "{A_ONLY_SCHEMA}", data: {{title: "b"}}}})', REMEMBER)), "denied"),
    Attempt("addRecord(A-only schema)", "addRecord", const(m("addRecord", f'(schema: "{A_ONLY_SCHEMA}", data: {{title: "b", code: "x"}})', RECORD)), "denied"),
    # ---- writes under the shared names: land in B only ---------------------------------
    Attempt("recall(shared session, autoPromote)", "recall", const(m("recall", f'(input: {{query: "{QUERY}", sessionId: "{SESSION}", limit: 50}})', RECALL)), "own"),
    Attempt("recall(shared user, VECTOR)", "recall", const(m("recall", f'(input: {{query: "{QUERY}", userId: "{USER}", retriever: VECTOR, limit: 50}})', RECALL)), "own"),
    Attempt("recall(tenant-wide, FULLTEXT)", "recall", const(m("recall", f'(input: {{query: "{QUERY}", retriever: FULLTEXT, limit: 50}})', RECALL)), "own"),
    Attempt("recall(A-only session)", "recall", const(m("recall", f'(input: {{query: "{QUERY}", sessionId: "{A_ONLY_SESSION}", limit: 50}})', RECALL)), "nothing", no_items),
    Attempt("recall(A's persona user)", "recall", const(m("recall", f'(input: {{query: "trait", userId: "agent.{A_ONLY_AGENT}"}})', RECALL)), "nothing", no_items),
    Attempt("prune(dry run, tenant-wide)", "prune", const(m("prune", "(policy: {olderThanSeconds: 0.001})", "dryRun count ids removed")), "own"),
    Attempt("prune(apply, tenant-wide, warm and cold)", "prune", const(m("prune", "(policy: {olderThanSeconds: 0.001, tiers: [WARM, COLD]}, dryRun: false)", "count ids removed")), "own"),
    Attempt("prune(apply, A-only session, 0 bytes)", "prune", const(m("prune", f'(policy: {{sessionId: "{A_ONLY_SESSION}", maxBytesPerSession: 0}}, dryRun: false)', "count ids removed")), "nothing", lambda v: v["count"] == 0 and v["removed"] == 0),
    Attempt("prune(apply, shared user, keep 0)", "prune", const(m("prune", f'(policy: {{userId: "{USER}", keepNewest: 0}}, dryRun: false)', "count ids removed")), "own"),
    Attempt("prune(apply, A's persona user)", "prune", const(m("prune", f'(policy: {{userId: "agent.{A_ONLY_AGENT}", keepNewest: 0}}, dryRun: false)', "count removed")), "nothing", lambda v: v["count"] == 0),
    Attempt("forgetUser(shared user)", "forgetUser", const(m("forgetUser", f'(userId: "{USER}")', "hotMemories graphMemories sessions entities")), "own"),
    Attempt("forgetUser(A-only user)", "forgetUser", const(m("forgetUser", f'(userId: "{A_ONLY_USER}")', "hotMemories graphMemories sessions entities")), "nothing", counts_zero),
    Attempt("forgetUser(A's persona user)", "forgetUser", const(m("forgetUser", f'(userId: "agent.{A_ONLY_AGENT}")', "hotMemories graphMemories sessions entities")), "nothing", counts_zero),
    Attempt("configureSession(shared session)", "configureSession", const(m("configureSession", f'(sessionId: "{SESSION}", config: {{hotTokenLimit: 40, spillCount: 1}})', CONFIG)), "own"),
    Attempt("configureSession(A-only session, reset)", "configureSession", const(m("configureSession", f'(sessionId: "{A_ONLY_SESSION}", config: {{hotTokenLimit: null}})', CONFIG)), "own"),
    Attempt("addMemory(shared session, shared user)", "addMemory", const(m("addMemory", f'(input: {{sessionId: "{SESSION}", userId: "{USER}", content: "B again on zephyr"}})', ITEM)), "own"),
    Attempt("addMemories(A-only session and user)", "addMemories", const(m("addMemories", f'(inputs: [{{sessionId: "{A_ONLY_SESSION}", userId: "{A_ONLY_USER}", content: "B one"}}, {{sessionId: "{SESSION}", content: "B two", type: FACT}}])', ITEM)), "own"),
    Attempt("spill(shared session)", "spill", const(m("spill", f'(sessionId: "{SESSION}", count: 100)', "spilledCount spilledIds warmIds coldIds")), "own"),
    Attempt("setEntityAlias(name → A's entity id)", "setEntityAlias", const(m("setEntityAlias", '(alias: "countess", canonical: "PERSON|ada lovelace")')), "denied"),
    Attempt("setEntityAlias(A's alias name)", "setEntityAlias", const(m("setEntityAlias", '(alias: "adal", canonical: "bee")')), "own"),
    Attempt("importTask(A's task id as importId)", "importTask", A(m("importTask", f'(input: {{importId: "<owned_task>", description: "b import", owner: "pipe-2", steps: [{{action: "b", order: 0}}], episodes: [{{outcome: "b", success: true, signature: "{SIG}"}}]}})', f"created task {{ {TASK} }}")), "own", lambda v: v["created"] is True),
    Attempt("createTask(A's owner name)", "createTask", const(m("createTask", '(description: "b task", owner: "pipe-2")', TASK)), "own"),
    Attempt("recordEpisode(A's signature)", "recordEpisode", const(m("recordEpisode", f'(input: {{outcome: "b out", success: false, signature: "{SIG}", description: "b", steps: [{{action: "b", status: FAILED}}], mappings: {{col: "b"}}}})', EPISODE)), "own"),
    Attempt("reflect()", "reflect", const(m("reflect", "", REFLECTION)), "own"),
    Attempt("reflect(A's signature)", "reflect", const(m("reflect", f'(signature: "{SIG}")', REFLECTION)), "own"),
    Attempt("setWorkingMemory(A's task, A's key)", "setWorkingMemory", A(m("setWorkingMemory", '(taskId: "<task>", key: "plan", value: "b")')), "own"),
    Attempt("remember(WORKING on A's task)", "remember", A(m("remember", '(input: {kind: WORKING, taskId: "<task>", key: "k2", value: 1})', REMEMBER)), "own"),
    Attempt("remember(SHORT_TERM, A-only session)", "remember", const(m("remember", f'(input: {{kind: SHORT_TERM, sessionId: "{A_ONLY_SESSION}", content: "b"}})', REMEMBER)), "own"),
    Attempt("remember(LONG_TERM, shared names)", "remember", const(m("remember", f'(input: {{kind: LONG_TERM, sessionId: "{SESSION}", userId: "{USER}", content: "b lt"}})', REMEMBER)), "own"),
    Attempt("remember(PERSONA, shared agent)", "remember", const(m("remember", f'(input: {{kind: PERSONA, agentId: "{AGENT}", content: "b trait"}})', REMEMBER)), "own"),
    Attempt("remember(STRUCTURED, shared schema)", "remember", const(m("remember", f'(input: {{kind: STRUCTURED, schema: "{SCHEMA}", data: {{name: "b"}}}})', REMEMBER)), "own"),
    Attempt("addMessage(shared session)", "addMessage", const(m("addMessage", f'(sessionId: "{SESSION}", content: "b msg")', MESSAGE)), "own"),
    Attempt("addMessage(A-only session)", "addMessage", const(m("addMessage", f'(sessionId: "{A_ONLY_SESSION}", content: "b msg", role: "assistant")', MESSAGE)), "own"),
    Attempt("setPersona(shared agent)", "setPersona", const(m("setPersona", f'(agentId: "{AGENT}", input: {{role: "b role"}})', PERSONA)), "own"),
    Attempt("setPersona(A-only agent)", "setPersona", const(m("setPersona", f'(agentId: "{A_ONLY_AGENT}", input: {{role: "b role"}})', PERSONA)), "own"),
    Attempt("learnPersonaTrait(A-only agent)", "learnPersonaTrait", const(m("learnPersonaTrait", f'(agentId: "{A_ONLY_AGENT}", trait: "b trait")')), "own"),
    Attempt("putItems(A's namespaces and key)", "putItems", const(m("putItems", f'(items: [{{namespace: {NS}, key: "a-key", valueJson: "{{\\"kind\\": \\"b\\"}}"}}, {{namespace: {A_ONLY_NS}, key: "a-key", valueJson: null}}])')), "own"),
    Attempt("addRecord(shared schema, A's shape)", "addRecord", const(m("addRecord", f'(schema: "{SCHEMA}", data: {{title: "b", code: "zephyr"}})', RECORD)), "own"),
    Attempt("registerRecordSchema(shared name)", "registerRecordSchema", const(m("registerRecordSchema", f'(name: "{SCHEMA}", schema: {{type: "object"}})')), "own"),
    Attempt("registerRecordSchema(A-only name)", "registerRecordSchema", const(m("registerRecordSchema", f'(name: "{A_ONLY_SCHEMA}", schema: {{type: "object"}})')), "own"),
    Attempt("remember(ENTITY, A's entity names)", "remember", const(m("remember", f'(input: {{kind: ENTITY, sessionId: "{SESSION}", userId: "{USER}", content: "ADA LOVELACE joined ACME in LONDON"}})', REMEMBER)), "own"),
    Attempt("entity(A's person id, after B made its own)", "entity", const(q("entity", '(id: "PERSON|ada lovelace")', DETAIL)), "any"),
    # ---- the change feed (run while A acts, before the snapshots) -----------------------
    Attempt("subscription(no filter)", "memoryEvents", const("{}"), "nothing", via="ws"),
    Attempt("subscription(shared session)", "memoryEvents", const(json.dumps({"f": {"sessionId": SESSION}})), "nothing", via="ws"),
    Attempt("subscription(shared user, every kind)", "memoryEvents", const(json.dumps({"f": {"userId": USER, "kinds": ["ADDED", "SPILLED", "PROMOTED", "RECALLED", "FORGOTTEN", "ENTITY_MERGED", "TASK_TRANSFERRED"]}})), "nothing", via="ws"),
]
# fmt: on


# --- the snapshot oracle -------------------------------------------------------------------
def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"bytes": base64.b64encode(value).decode()}
    if hasattr(value, "iso_format"):
        return {"time": value.iso_format()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


NODES = """MATCH (n) WHERE n.tenant = $t OR (n:Tenant AND n.id = $t)
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props"""
RELS = """MATCH (n)-[r]-(o) WHERE n.tenant = $t OR (n:Tenant AND n.id = $t)
WITH DISTINCT r
WITH r, startNode(r) AS s, endNode(r) AS e
RETURN elementId(r) AS id, type(r) AS type, properties(r) AS props,
  elementId(s) AS start, elementId(e) AS end,
  coalesce(s.tenant, CASE WHEN s:Tenant THEN s.id END) AS startTenant,
  coalesce(e.tenant, CASE WHEN e:Tenant THEN e.id END) AS endTenant"""


class Oracle:
    """Canonical dumps of one tenant's Neo4j nodes and relationships and Redis keys."""

    def __init__(self, stack: Stack, tenant: str) -> None:
        from neo4j import AsyncGraphDatabase

        self.tenant = tenant
        self.driver = AsyncGraphDatabase.driver(
            stack.neo4j_uri, auth=(stack.neo4j_user, stack.neo4j_password)
        )
        self.redis = stack.redis()

    async def close(self) -> None:
        await self.driver.close()
        await self.redis.aclose()

    async def _cypher(self, query: str) -> list[dict[str, Any]]:
        records, _, _ = await self.driver.execute_query(query, {"t": self.tenant})
        return [_plain(dict(r)) for r in records]

    async def graph(self) -> dict[str, Any]:
        nodes = sorted(await self._cypher(NODES), key=lambda n: n["id"])
        rels = sorted(await self._cypher(RELS), key=lambda r: r["id"])
        return {"nodes": nodes, "relationships": rels}

    async def keys(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async for key in self.redis.scan_iter(match=f"*{self.tenant}*", count=1000):
            kind = await self.redis.type(key)
            value: Any
            if kind == "string":
                value = await self.redis.get(key)
            elif kind == "hash":
                value = dict(sorted((await self.redis.hgetall(key)).items()))
            elif kind == "list":
                value = await self.redis.lrange(key, 0, -1)
            elif kind == "set":
                value = sorted(await self.redis.smembers(key))
            elif kind == "zset":
                value = await self.redis.zrange(key, 0, -1, withscores=True)
            else:
                value = f"<{kind}>"
            out[key] = {"type": kind, "value": value}
        return dict(sorted(out.items()))

    async def dump(self) -> str:
        state = {"neo4j": await self.graph(), "redis": await self.keys()}
        return json.dumps(state, sort_keys=True, ensure_ascii=False, default=str)


def diff(before: str, after: str, limit: int = 4000) -> str:
    import difflib

    old = json.dumps(json.loads(before), indent=1, sort_keys=True).splitlines()
    new = json.dumps(json.loads(after), indent=1, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(old, new, "before", "after", n=2, lineterm=""))[:limit]


# --- the server and clients ----------------------------------------------------------------
@asynccontextmanager
async def quiet_server(stack: Stack) -> AsyncIterator[LiveApi]:
    """A real uvicorn server like `live_api`, without the maintenance loop (which may
    demote or flush A's data on its own and blur the snapshots)."""
    import uvicorn

    from graphmem.api.http.app import create_app

    tenants = [new_tenant(), new_tenant()]
    keys = {t: f"key-{uuid.uuid4().hex}" for t in tenants}
    port = free_port()
    settings = stack.settings(api_keys={k: t for t, k in keys.items()}, maintenance_enabled=False)
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "uvicorn exited during start-up"
        await asyncio.sleep(0.05)
    try:
        yield LiveApi(f"http://127.0.0.1:{port}", keys)
    finally:
        server.should_exit = True
        await task


class Caller:
    def __init__(self, api: LiveApi, tenant: str, http: httpx.AsyncClient) -> None:
        self.api, self.tenant, self.http = api, tenant, http
        self.mcp: Client | None = None

    async def raw(self, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.http.post(
            f"{self.api.url}/graphql",
            json={"query": document, "variables": variables or {}},
            headers=self.api.headers(self.tenant),
        )
        body: dict[str, Any] = response.json()
        return body

    async def data(self, document: str, variables: dict[str, Any] | None = None) -> Any:
        body = await self.raw(document, variables)
        assert "errors" not in body, (document, body)
        return body["data"]

    async def tool(self, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
        assert self.mcp is not None
        result = await self.mcp.call_tool(name, args)
        if not result.is_error and result.structured_content is not None:
            # the memory-server tools' text is the reference's (a list, or a sentence)
            return False, result.structured_content
        return bool(result.is_error), json.loads(result.content[0].text)  # type: ignore[union-attr]


@asynccontextmanager
async def listener(api: LiveApi, tenant: str, variables: dict[str, Any]) -> AsyncIterator[list]:
    """A graphql-transport-ws subscription whose messages pile up in the yielded list."""
    url = api.url.replace("http://", "ws://") + "/graphql"
    heard: list[Any] = []
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as ws:
        init = {"type": "connection_init", "payload": api.headers(tenant)}
        await ws.send(json.dumps(init))
        ack = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert ack["type"] == "connection_ack", ack
        document = "subscription($f: EventFilter) { memoryEvents(filter: $f) { kind at sessionId userId itemIds data } }"
        payload = {"query": document, "variables": variables}
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))

        async def pump() -> None:
            async for message in ws:
                heard.append(json.loads(message))

        reader = asyncio.create_task(pump())
        await asyncio.sleep(0.5)  # let the server subscribe to the channel
        try:
            yield heard
        finally:
            reader.cancel()


# fmt: off
# --- A's data --------------------------------------------------------------------------------
async def seed_b(b: Caller) -> None:
    """B's own data under the names A uses too (written before A exists)."""
    await b.data(m("configureSession", f'(sessionId: "{SESSION}", config: {{hotTokenLimit: 555}})', "hotTokenLimit"))
    await b.data(m("addMemories", f'(inputs: [{{sessionId: "{SESSION}", userId: "{USER}", content: "{B_TEXT}", type: FACT}}, {{sessionId: "{SESSION}", userId: "{USER}", content: "Grace Hopper visited Boston with team bee."}}])', "id"))
    await b.data(m("spill", f'(sessionId: "{SESSION}")', "spilledCount"))
    await b.data(m("addMemory", f'(input: {{sessionId: "{SESSION}", userId: "{USER}", content: "B hot zephyr note"}})', "id"))
    await b.data(m("addMessage", f'(sessionId: "{SESSION}", content: "B message")', "role"))
    await b.data(m("setPersona", f'(agentId: "{AGENT}", input: {{role: "B role"}})', "role"))
    await b.data(m("learnPersonaTrait", f'(agentId: "{AGENT}", trait: "B trait: brief")'))
    await b.data(m("registerRecordSchema", f'(name: "{SCHEMA}", schema: {{type: "object", properties: {{name: {{type: "string"}}}}}})'))
    await b.data(m("addRecord", f'(schema: "{SCHEMA}", data: {{name: "bee", code: "zephyr"}})', "id"))
    await b.data(m("recordEpisode", f'(input: {{outcome: "B outcome", success: true, signature: "{SIG}", description: "B deploy", mappings: {{col: "bee"}}}})', "id"))
    await b.data(m("reflect", "", "id"))
    await b.data(m("putItems", f'(items: [{{namespace: {NS}, key: "b-key", valueJson: {json.dumps(json.dumps({"text": B_TEXT, "kind": "zephyr"}))}}}])'))
    failed, _ = await b.tool("create_entities", {"entities": [kg_ent(KG_SHARED, "person", "B's observation")]})
    assert not failed


async def seed_a(a: Caller) -> dict[str, Any]:
    """Every kind of memory for A; returns A's ids."""
    ids: dict[str, Any] = {}

    async def add(key: str, session: str, user: str | None, kind: str = "FACT") -> None:
        user_arg = f', userId: "{user}"' if user else ""
        doc = m("addMemory", f"(input: {{sessionId: \"{session}\"{user_arg}, content: {json.dumps(A_TEXT[key])}, type: {kind}, metadata: {{ref: {json.dumps(secret(key + '-meta'))}}}}})", "id")
        ids[key] = (await a.data(doc))["addMemory"]["id"]

    await a.data(m("configureSession", f'(sessionId: "{SESSION}", config: {{hotTokenLimit: 777, promoteThreshold: 0.99}})', "hotTokenLimit"))
    for key in ("ada", "babbage", "paris", "budget"):
        await add(key, SESSION, USER)
    await a.data(A(m("spill", f'(sessionId: "{SESSION}", itemIds: ["<ada>", "<babbage>", "<paris>", "<budget>"])', "spilledCount"))(ids))
    await add("hot", SESSION, USER, "DECISION")
    await add("only", A_ONLY_SESSION, A_ONLY_USER)
    await a.data(m("spill", f'(sessionId: "{A_ONLY_SESSION}")', "spilledCount"))
    await add("forgotten", SESSION, USER)
    await a.data(A(m("forget", '(itemId: "<forgotten>")'))(ids))
    await a.data(m("recall", f'(input: {{query: "zephyr budget", sessionId: "{SESSION}", autoPromote: false}})', "promoted"))
    await a.data(A(m("promote", '(itemId: "<budget>")', "id"))(ids))
    await a.data(A(m("spill", f'(sessionId: "{SESSION}", itemIds: ["<budget>"])', "spilledCount"))(ids))

    # entities: a merge A keeps, and an alias
    found = (await a.data(q("entities", f'(userId: "{USER}")', "entity { id name type }")))["entities"]
    entity_ids = sorted(e["entity"]["id"] for e in found)
    assert {"PERSON|ada lovelace", "PERSON|charles babbage", "PLACE|eiffel tower", "PLACE|paris"} <= set(entity_ids), entity_ids
    ids["ent1"], ids["ent2"] = "PERSON|ada lovelace", "PERSON|charles babbage"
    ids["merge_source"], ids["merge_target"], ids["merge_surface"] = "PLACE|eiffel tower", "PLACE|paris", "Eiffel Tower"
    merged = await a.data(m("mergeEntities", '(sourceId: "PLACE|eiffel tower", targetId: "PLACE|paris", reason: "a")', "mergeId"))
    ids["merge"] = merged["mergeEntities"]["mergeId"]
    await a.data(m("setEntityAlias", '(alias: "adal", canonical: "Ada Lovelace")'))

    # tasks, steps, a hand-over, working memory, episodes, reflections
    task = await a.data(m("createTask", f'(description: "{secret("task")}")', "id"))
    ids["task"] = task["createTask"]["id"]
    await a.data(A(m("addStep", f'(taskId: "<task>", input: {{action: "{secret("step")}", status: FAILED}})', "id"))(ids))
    step = await a.data(A(m("addStep", f'(taskId: "<task>", input: {{action: "{secret("step2")}", result: "ok"}})', "id"))(ids))
    ids["step"] = step["addStep"]["id"]
    owned = await a.data(m("createTask", f'(description: "{secret("task2")}", owner: "pipe-1")', "id"))
    ids["owned_task"] = owned["createTask"]["id"]
    await a.data(A(m("transferTask", '(taskId: "<owned_task>", fromOwner: "pipe-1", toOwner: "pipe-2", generation: 1, reason: "a")', "generation"))(ids))
    await a.data(A(m("setWorkingMemory", f'(taskId: "<task>", key: "plan", value: {{secret: "{secret("wm")}"}})'))(ids))
    await a.data(A(m("remember", f'(input: {{kind: WORKING, taskId: "<task>", key: "k2", value: "{secret("wm2")}"}})', "kind"))(ids))
    episode = await a.data(A(m("recordEpisode", f'(input: {{taskId: "<task>", outcome: "{secret("episode")}", success: false, signature: "{SIG}", lessons: ["{secret("lesson")}"], metrics: {{rows: 3}}, mappings: {{col: "{secret("map")}"}}}})', "id taskId"))(ids))
    ids["episode"] = episode["recordEpisode"]["id"]
    made = await a.data(m("recordEpisode", f'(input: {{outcome: "{secret("episode2")}", success: true, description: "deploy zephyr", signature: "{SIG}", steps: [{{action: "{secret("step")}", status: FAILED}}, {{action: "retry zephyr"}}], mappings: {{col: "{secret("map")}"}}}})', "id taskId"))
    ids["episode2"], ids["episode_task"] = made["recordEpisode"]["id"], made["recordEpisode"]["taskId"]
    # reflection ids hash kind, signature and pattern text: B's equal pattern gets an equal id
    await a.data(m("reflect", "", "id"))

    # personas, records, conversation, the remaining memory kinds
    await a.data(m("setPersona", f'(agentId: "{AGENT}", input: {{role: "{secret("role")}", expertise: ["zephyr"]}})', "role"))
    await a.data(m("setPersona", f'(agentId: "{A_ONLY_AGENT}", input: {{role: "{secret("role2")}"}})', "role"))
    ids["trait"] = (await a.data(m("learnPersonaTrait", f'(agentId: "{AGENT}", trait: "{secret("trait")}")')))["learnPersonaTrait"]
    await a.data(m("learnPersonaTrait", f'(agentId: "{A_ONLY_AGENT}", trait: "{secret("trait2")}")'))
    shape = '{type: "object", properties: {title: {type: "string"}, code: {type: "string"}}, required: ["title"]}'
    await a.data(m("registerRecordSchema", f"(name: \"{SCHEMA}\", schema: {shape})"))
    await a.data(m("registerRecordSchema", f"(name: \"{A_ONLY_SCHEMA}\", schema: {shape})"))
    record = await a.data(m("addRecord", f'(schema: "{SCHEMA}", data: {{title: "{secret("record")}", code: "zephyr"}})', "id"))
    ids["record"] = record["addRecord"]["id"]
    await a.data(m("addRecord", f'(schema: "{A_ONLY_SCHEMA}", data: {{title: "{secret("record2")}"}})', "id"))
    await a.data(m("addMessage", f'(sessionId: "{SESSION}", content: "{secret("msg")}")', "role"))
    await a.data(m("addMessage", f'(sessionId: "{A_ONLY_SESSION}", content: "{secret("msg2")}")', "role"))
    remembered = []
    for kind, extra in (
        ("LONG_TERM", f'sessionId: "{SESSION}", userId: "{USER}", content: {json.dumps(A_TEXT["lt"])}'),
        ("ENTITY", f'sessionId: "{SESSION}", userId: "{USER}", content: {json.dumps(A_TEXT["entity"])}'),
        ("SHORT_TERM", f'sessionId: "{SESSION}", content: "{secret("stm")}"'),
        ("EPISODIC", f'content: "{secret("epi3")}"'),
        ("STRUCTURED", f'schema: "{SCHEMA}", data: {{title: "{secret("rec3")}"}}'),
        ("PERSONA", f'agentId: "{AGENT}", content: "{secret("trait")} again"'),
    ):
        done = await a.data(m("remember", f"(input: {{kind: {kind}, {extra}}})", "memoryId episodeId recordId"))
        remembered += [v for v in done["remember"].values() if v]
    ids["remembered"] = remembered
    a_items = [
        (NS, "a-key", {"text": f"zephyr budget ada lovelace {secret('item')}", "kind": "zephyr"}),
        (A_ONLY_NS, "a-key", {"text": f"zephyr acme london {secret('item2')}", "kind": "zephyr"}),
    ]
    puts = ", ".join(
        f"{{namespace: {ns}, key: {json.dumps(key)}, valueJson: {json.dumps(json.dumps(value))}}}"
        for ns, key, value in a_items
    )
    assert (await a.data(m("putItems", f"(items: [{puts}])")))["putItems"] == 2
    await a.tool("memory_add", {"sessionId": SESSION, "content": A_TEXT["hot"] + " mcp", "type": "fact"})
    ids["mcp_hot"] = [i["id"] for i in (await a.data(q("hot", f'(sessionId: "{SESSION}")', "id")))["hot"]]
    for tool, args in (
        ("create_entities", {"entities": [kg_ent(KG_SHARED, "person", secret("kgobs")), kg_ent(KG_A_ONLY, "project", secret("kgobs2"))]}),
        ("create_relations", {"relations": [kg_rel(KG_SHARED, KG_A_ONLY, KG_A_REL), kg_rel(KG_A_ONLY, KG_SHARED, "knows")]}),
    ):
        failed, result = await a.tool(tool, args)
        assert not failed, result
    return ids

# fmt: on


def a_ids(ids: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for value in ids.values():
        for v in value if isinstance(value, list) else [value]:
            if not str(v).isupper() and "|" not in str(v) and v not in ("Eiffel Tower",):
                out.add(str(v))
    return out


# --- comparison helpers ------------------------------------------------------------------------
VOLATILE = {"score", "similarity", "cosine", "at", "timestamp", "lastAccessedAt", "createdAt"}
VOLATILE |= {"utilizationPercent", "accessCount", "relevanceScore", "prompt", "confidence"}


def normal(value: Any) -> Any:
    """A response without ranking scores and clocks, lists in a canonical order."""
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        items = [normal(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def error_codes(body: dict[str, Any]) -> list[str]:
    return [e.get("extensions", {}).get("code", "?") for e in body.get("errors") or []]


def leaks(text: str, sent: str, forbidden: list[str]) -> list[str]:
    lower = text.lower()
    return [
        f for f in forbidden if f and f not in sent and (f in text or (f == TAG and f in lower))
    ]


async def run_attempt(
    attempt: Attempt, b: Caller, ids: dict[str, Any], before: dict[str, Any] | None
) -> tuple[Any, str | None]:
    """One attempt: (what B got, a problem or None). `before` holds pre-A answers."""
    document = attempt.doc(ids)
    if attempt.via == "mcp":
        args = json.loads(document)
        is_error, result = await b.tool(attempt.op, args)
        if attempt.expect == "denied":
            ok = is_error and result.get("error", {}).get("code") in ("NOT_FOUND", "FORBIDDEN")
            return result, None if ok else "expected NOT_FOUND/FORBIDDEN"
        if is_error:
            return result, f"unexpected error {result}"
        value = result
    else:
        body = await b.raw(document)
        codes = error_codes(body)
        if attempt.expect == "denied":
            data = (body.get("data") or {}).get(attempt.op)
            ok = bool(codes) and set(codes) <= {"NOT_FOUND", "FORBIDDEN"} and data is None
            return body, None if ok else f"expected NOT_FOUND/FORBIDDEN, got {codes or 'data'}"
        if codes:
            if attempt.expect == "any" and set(codes) <= {"NOT_FOUND", "FORBIDDEN"}:
                return body, None
            return body, f"unexpected errors {codes}: {body['errors']}"
        value = body["data"][attempt.op]
    if attempt.expect == "same" and before is not None:
        if normal(value) != normal(before.get(attempt.name)):
            return value, (
                f"differs from what B saw before A wrote: before={before.get(attempt.name)!r}"
            )
    if attempt.check is not None and not attempt.check(value):
        return value, "not empty / not B's own"
    return value, None


# --- the tests -----------------------------------------------------------------------------
def test_the_attempts_cover_every_operation() -> None:
    schema = (ROOT / "schema.graphql").read_text()
    ops: set[str] = set()
    for kind in ("Query", "Mutation"):
        block = re.search(rf"type {kind} \{{(.*?)\n\}}", schema, re.S)
        assert block
        ops |= set(re.findall(r"^  (\w+)[(:]", block.group(1), re.M))
    ops |= {"memory_add", "memory_recall", "memory_spill", "memory_status", "memoryEvents"}
    ops |= {t.name for t in mcp_graph_tools.TOOLS}
    covered = {a.op for a in ATTEMPTS}
    assert ops - covered == set(), f"operations with no attempt: {sorted(ops - covered)}"
    assert len(ATTEMPTS) >= 60, len(ATTEMPTS)
    assert len({a.name for a in ATTEMPTS}) == len(ATTEMPTS), "attempt names must be distinct"


async def test_tenant_b_cannot_read_change_or_hear_tenant_a(stack: Stack) -> None:
    failure: list[AssertionError] = []
    try:
        await crossing_attempts(stack, failure)
    except BaseExceptionGroup as group:  # the MCP clients' task groups wrap the failure
        if not failure:
            raise
        del group
    if failure:
        raise failure[0]


async def crossing_attempts(stack: Stack, failure: list[AssertionError]) -> None:
    async with AsyncExitStack() as exits:
        try:
            api = await exits.enter_async_context(quiet_server(stack))
            tenant_a, tenant_b = list(api.keys)
            http = await exits.enter_async_context(httpx.AsyncClient(timeout=120))
            a, b = Caller(api, tenant_a, http), Caller(api, tenant_b, http)
            for caller in (a, b):
                mcp_http = await exits.enter_async_context(
                    httpx2.AsyncClient(headers=api.headers(caller.tenant), timeout=120)
                )
                caller.mcp = await exits.enter_async_context(
                    Client(streamable_http_client(f"{api.url}/mcp", http_client=mcp_http))
                )
            oracle = Oracle(stack, tenant_a)
            exits.push_async_callback(oracle.close)

            # 1. B's own data under the shared names, and what B's reads answer without A
            await seed_b(b)
            before: dict[str, Any] = {}
            for attempt in ATTEMPTS:
                if attempt.expect == "same":
                    value, problem = await run_attempt(attempt, b, {"task": "none"}, None)
                    assert problem is None, (attempt.name, problem)
                    before[attempt.name] = value

            # 2. A acts while B (and, as a control, A) subscribe
            subs = [a_ for a_ in ATTEMPTS if a_.via == "ws"]
            heard_b = [
                await exits.enter_async_context(listener(api, tenant_b, json.loads(s.doc({}))))
                for s in subs
            ]
            heard_a = await exits.enter_async_context(listener(api, tenant_a, {}))
            ids = await seed_a(a)
            await asyncio.sleep(2)
            kinds_a = {
                h["payload"]["data"]["memoryEvents"]["kind"] for h in heard_a if "payload" in h
            }
            assert {"ADDED", "SPILLED", "RECALLED", "PROMOTED", "FORGOTTEN"} <= kinds_a, heard_a
            assert {"ENTITY_MERGED", "TASK_TRANSFERRED"} <= kinds_a, kinds_a

            forbidden = [*A_STRINGS, *sorted(a_ids(ids))]
            problems: list[str] = []
            for s, heard in zip(subs, heard_b, strict=True):
                if heard:
                    problems.append(f"[{s.name}] B heard A's events: {heard[:3]}")

            # 3. the snapshot of A, stable while nobody acts
            baseline = await oracle.dump()
            state = json.loads(baseline)
            assert len(state["neo4j"]["nodes"]) > 30 and len(state["redis"]) >= 5, state["redis"]
            await asyncio.sleep(1.5)
            assert await oracle.dump() == baseline, "A's state moves on its own; no oracle"
            stray = [
                r
                for r in state["neo4j"]["relationships"]
                if {r["startTenant"], r["endTenant"]} != {tenant_a}
            ]
            assert stray == [], f"A's graph links to another tenant: {stray[:3]}"

            # 4. B's attempts, A's snapshot compared after each one
            current = baseline
            table: list[str] = []
            for attempt in ATTEMPTS:
                if attempt.via == "ws":
                    table.append(f"ok    {attempt.name}")
                    continue
                document = attempt.doc(ids)
                value, problem = await run_attempt(attempt, b, ids, before)
                text = json.dumps(value, ensure_ascii=False)
                leaked = leaks(text, document, forbidden)
                if leaked:
                    problem = f"{problem or ''} response carries A's {leaked[:5]}".strip()
                after = await oracle.dump()
                if after != current:
                    problems.append(f"[{attempt.name}] changed A's data:\n{diff(current, after)}")
                    current = after
                if problem:
                    problems.append(
                        f"[{attempt.name}] {problem}\n  request: {document}\n  got: {text[:1500]}"
                    )
                table.append(f"{'FAIL' if problem else 'ok':5} {attempt.name}")

            # 5. the end state, and A's working memory (in process, outside both stores)
            final = await oracle.dump()
            if final != baseline:
                problems.append(
                    f"[end] A's data differs from the baseline:\n{diff(baseline, final)}"
                )
            working = await a.data(A(q("workingMemory", '(taskId: "<task>")'))(ids))
            if working["workingMemory"] != {"plan": {"secret": secret("wm")}, "k2": secret("wm2")}:
                problems.append(f"[end] A's working memory changed: {working}")

            report = "\n".join(table)
            assert not problems, (
                f"{len(problems)} crossing(s):\n" + "\n\n".join(problems) + "\n\n" + report
            )
        except AssertionError as error:
            failure.append(error)
            raise


async def test_metrics_show_tenant_b_nothing_of_tenant_a(stack: Stack) -> None:
    """/metrics labels series by tenant: with B's key (or none), A's tenant id and A's
    spill, recall and promotion counts must not be readable."""
    async with quiet_server(stack) as api, httpx.AsyncClient(timeout=60) as http:
        tenant_a, tenant_b = list(api.keys)
        a = Caller(api, tenant_a, http)
        await a.data(m("addMemory", '(input: {sessionId: "s", content: "A metric"})', "id"))
        await a.data(m("spill", '(sessionId: "s")', "spilledCount"))
        await a.data(m("recall", '(input: {sessionId: "s", query: "metric"})', "promoted"))
        for headers in (api.headers(tenant_b), {}):
            response = await http.get(f"{api.url}/metrics", headers=headers)
            seen = [
                line
                for line in response.text.splitlines()
                if tenant_a in line and not line.startswith("#")
            ]
            assert response.status_code in (401, 403) or seen == [], (
                f"GET /metrics with {'B' if headers else 'no'} key shows A: {seen[:6]}"
            )
