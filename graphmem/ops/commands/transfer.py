"""`graphmem import` and `graphmem export`: memories from and to files, through a
running API."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from graphmem.errors import ConfigurationError

if TYPE_CHECKING:
    from graphmem.client import Graphmem


def _client(args: argparse.Namespace) -> Graphmem:
    from graphmem.client import Graphmem

    if not args.key:
        raise ConfigurationError("GRAPHMEM_KEY: give the API key with --key or GRAPHMEM_KEY")
    return Graphmem(args.url, args.key)


def import_memories(args: argparse.Namespace) -> int:
    """Exit 0 when the import ran to the end, skipped entries and all (each is printed on
    stderr with where and why); 1 when none of the file's entries could be imported
    (every one skipped), when ``--strict`` and any was skipped, or when the API stopped
    it (a rerun resumes)."""
    from tqdm import tqdm

    from graphmem.client import GraphmemError
    from graphmem.transfer.importer import import_file
    from graphmem.transfer.sources import Skipped

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request drowns the skips

    def skipped(entry: Skipped) -> None:
        tqdm.write(f"{args.file}: {entry.where}: skipped: {entry.reason}", file=sys.stderr)

    try:
        with _client(args) as gm:
            report = import_file(
                gm,
                Path(args.file),
                batch=args.batch,
                progress=not args.quiet,
                wait_seconds=args.wait,
                on_skip=skipped,
            )
    except OSError as exc:
        print(f"graphmem import: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except GraphmemError as exc:
        print(f"graphmem import: stopped: {exc} (run it again to resume)", file=sys.stderr)
        return 1
    print(
        f"imported {report.added}, already there {report.duplicates}, "
        f"skipped {report.skipped}, spilled {report.spilled}"
    )
    if report.erased:
        print(f"not imported, erased since: {report.erased}")
    if report.retracted:
        print(f"retracted again, as the export had them: {report.retracted}")
    if report.receipts_restored or report.receipts_held:
        print(
            f"erasure receipts: restored {report.receipts_restored}, "
            f"already there {report.receipts_held}"
        )
    if report.tasks_added or report.tasks_skipped:
        print(f"tasks: added {report.tasks_added}, already there {report.tasks_skipped}")
    g = report.graph
    if g.items or g.items_held:
        print(f"store items: written {g.items}, already there {g.items_held}")
    if g.entities or g.observations or g.relations or g.graph_held:
        print(
            f"knowledge graph: entities {g.entities}, observations {g.observations}, "
            f"relations {g.relations}, already there {g.graph_held}"
        )
    if report.waiting:
        print(
            f"{report.waiting} memories still wait for their vectors and entities "
            "(searchable by their words meanwhile; the `enrichment` query follows them)"
        )
    usable = report.added + report.duplicates + report.tasks_added + report.tasks_skipped
    usable += report.erased + report.receipts_restored + report.receipts_held
    usable += g.items + g.items_held + g.entities + g.observations + g.relations + g.graph_held
    if report.skipped and (args.strict or not usable):
        return 1
    return 0


def export_memories(args: argparse.Namespace) -> int:
    from graphmem.transfer.exporter import export_tenant, export_user

    with _client(args) as gm:
        out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
        try:
            done = export_user(gm, args.user, out) if args.user else export_tenant(gm, out)
        finally:
            if out is not sys.stdout:
                out.close()
    whose = f"of {args.user}" if args.user else "of the tenant"
    print(
        f"exported {done.memories} memories, {done.entities} entities, {done.tasks} tasks "
        f"and {done.items} store items {whose}, {done.kg_entities} knowledge-graph entities "
        f"and {done.kg_relations} relations, and the tenant's {done.receipts} erasure receipts",
        file=sys.stderr,
    )
    return 0
