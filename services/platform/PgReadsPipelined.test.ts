import { assert, describe, it } from "@effect/vitest"
import { onlyReads } from "./PgReadsPipelined.ts"

describe("onlyReads (decision 0031: which statements share a connection)", () => {
  it("plain queries share", () => {
    for (
      const sql of [
        "SELECT id, key FROM sources WHERE key = $1",
        "  select count(*) from crowd_reports where source_id = $1",
        "WITH recent AS (SELECT * FROM status_transitions WHERE at > $1) SELECT * FROM recent",
        "(SELECT 1) UNION ALL (SELECT 2)",
        "VALUES (1), (2)",
        "SELECT updated_at, offset_ms FROM sources ORDER BY key LIMIT 50 OFFSET 100",
        "SELECT pg_sleep(0.1)"
      ]
    ) assert.isTrue(onlyReads(sql), sql)
  })

  it("writes, locking reads, advisory locks and session changes keep a connection to themselves", () => {
    for (
      const sql of [
        "INSERT INTO crowd_reports (source_id) VALUES ($1)",
        "UPDATE sources SET status = $1 WHERE id = $2",
        "DELETE FROM sessions WHERE expires_at < now()",
        "WITH inserted AS (INSERT INTO t VALUES (1) RETURNING *) SELECT * FROM inserted",
        "WITH gone AS (DELETE FROM t RETURNING id) SELECT count(*) FROM gone",
        "SELECT id FROM organizations WHERE id = $1 FOR UPDATE",
        "SELECT 1 FROM stacks WHERE id = $1 FOR SHARE",
        "SELECT id FROM jobs FOR NO KEY UPDATE SKIP LOCKED",
        "SELECT id FROM jobs FOR KEY SHARE",
        "SELECT pg_advisory_lock(1, 2)",
        "SELECT pg_try_advisory_lock(1, 2) AS \"3\"",
        "SELECT pg_advisory_unlock_all()",
        "SELECT nextval('s')",
        "SELECT set_config('statement_timeout', '1s', false)",
        "SELECT pg_notify('c', 'p')",
        "BEGIN",
        "COMMIT",
        "SET statement_timeout = 1000",
        "LOCK TABLE sources",
        "CREATE TABLE t (n int)",
        "VACUUM ANALYZE crowd_reports",
        "LISTEN c",
        "COPY t FROM STDIN"
      ]
    ) assert.isFalse(onlyReads(sql), sql)
  })
})
