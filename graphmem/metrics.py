"""The six tier metrics (docs/concepts.md#tiers), in a Prometheus registry of the service's own.

Labels carry the tenant where the set of tenants is bounded by configuration (API
keys); the latency histogram has no tenant label so its series count stays small.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from graphmem.ops import allocator

LATENCY_BUCKETS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.hot_utilization = Gauge(
            "memory_hot_utilization",
            "Hot memory usage percentage of the session last written, per tenant",
            ["tenant"],
            registry=r,
        )
        self.spill_count = Counter(
            "memory_spill_count",
            "Spill operations that moved at least one item",
            ["tenant"],
            registry=r,
        )
        self.spilled_items = Counter(
            "memory_spilled_items",
            "Items moved from hot to warm/cold",
            ["tenant", "tier"],
            registry=r,
        )
        self.recall_count = Counter(
            "memory_recall_count", "Recall operations", ["tenant"], registry=r
        )
        self.promotion_count = Counter(
            "memory_promotion_count", "Items promoted to hot", ["tenant"], registry=r
        )
        self.recall_latency_ms = Histogram(
            "memory_recall_latency_ms",
            "Time to recall from warm/cold storage, in milliseconds",
            buckets=LATENCY_BUCKETS_MS,
            registry=r,
        )
        self.hit_rate = Gauge(
            "memory_hit_rate",
            "Share of recalls (0-1) that found at least one relevant item, per tenant",
            ["tenant"],
            registry=r,
        )
        self.refused = Counter(
            "graphmem_admission_refused",
            "Requests refused by admission control (rate, concurrency, quota), per tenant",
            ["tenant", "reason"],
            registry=r,
        )
        self.enrichment_backlog = Gauge(
            "graphmem_enrichment_backlog",
            "Write-behind jobs on the enrichment queue not yet done (read or not)",
            registry=r,
        )
        self.enrichment_lag_seconds = Gauge(
            "graphmem_enrichment_lag_seconds",
            "Age of the oldest write-behind job not yet done",
            registry=r,
        )
        self.enrichment_parked = Gauge(
            "graphmem_enrichment_parked",
            "Write-behind jobs parked after failing too often (see `graphmem worker --parked`)",
            registry=r,
        )
        self.search_cache_bytes = Gauge(
            "graphmem_search_cache_bytes",
            "Bytes of search scopes this process holds (bounded by GRAPHMEM_SEARCH_CACHE_MB)",
            registry=r,
        )
        r.register(_HeapCollector())
        self._recalls: dict[str, tuple[int, int]] = {}

    def hot(self, tenant: str, tokens: int, limit: int) -> None:
        self.hot_utilization.labels(tenant).set(100.0 * tokens / limit if limit else 0.0)

    def spilled(self, tenant: str, warm: int, cold: int) -> None:
        if warm + cold == 0:
            return
        self.spill_count.labels(tenant).inc()
        self.spilled_items.labels(tenant, "warm").inc(warm)
        self.spilled_items.labels(tenant, "cold").inc(cold)

    def queue(self, backlog: int, lag_seconds: float, parked: int) -> None:
        self.enrichment_backlog.set(backlog)
        self.enrichment_lag_seconds.set(lag_seconds)
        self.enrichment_parked.set(parked)

    def recalled(self, tenant: str, latency_ms: float, hit: bool) -> None:
        self.recall_count.labels(tenant).inc()
        self.recall_latency_ms.observe(latency_ms)
        total, hits = self._recalls.get(tenant, (0, 0))
        total, hits = total + 1, hits + int(hit)
        self._recalls[tenant] = (total, hits)
        self.hit_rate.labels(tenant).set(hits / total)

    def recall_counts(self, tenant: str) -> tuple[int, int]:
        """(recalls, hits) of a tenant in this process."""
        return self._recalls.get(tenant, (0, 0))

    def promoted(self, tenant: str, count: int) -> None:
        if count:
            self.promotion_count.labels(tenant).inc(count)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _HeapCollector(Collector):
    """``graphmem_heap_bytes``: glibc's account of the heap, read once per scrape."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "graphmem_heap_bytes",
            "This process's C heap (glibc): in_use by live blocks, free blocks kept, mapped "
            "blocks with mappings of their own",
            labels=["state"],
        )
        heap = allocator.heap() or {}
        for state in ("in_use", "free", "mapped"):
            family.add_metric([state], float(heap.get(state, 0)))
        yield family
