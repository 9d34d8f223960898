// forgetTask looks again for a task's hand-overs and episodes by the task id they carry,
// after the task node is gone (erasure/task_counts).
CREATE INDEX transfer_tenant_task IF NOT EXISTS FOR (x:Transfer) ON (x.tenant, x.taskId);
CREATE INDEX episode_tenant_task IF NOT EXISTS FOR (e:Episode) ON (e.tenant, e.taskId);
