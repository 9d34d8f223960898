// Record time on episodes, reflections and structured records (docs/concepts.md, "Two
// clocks"): priorKnowledge and records read at a moment compare it with $asOf. Nodes
// written before it was kept were recorded when they were created, so they take their
// createdAt; the reads still fall back on createdAt for any node written by a process
// older than this file while it ran. Guarded by IS NULL: a second run sets nothing.
MATCH (e:Episode) WHERE e.recordedAt IS NULL AND e.createdAt IS NOT NULL SET e.recordedAt = e.createdAt;
MATCH (r:Reflection) WHERE r.recordedAt IS NULL AND r.createdAt IS NOT NULL SET r.recordedAt = r.createdAt;
MATCH (r:Record) WHERE r.recordedAt IS NULL AND r.createdAt IS NOT NULL SET r.recordedAt = r.createdAt;
