import type { HistorySubject } from "../domain/History.ts"

/**
 * The rollups as their readers need them (decision 0022). Since migration 0005 a source's component
 * has rollup rows only for the checks that found it not operational, and the source has a row
 * `component_id = '*'` counting its checks that listed components (an unread page lists none), which
 * stands for every component without a row of its own. `rollupRows` gives every subject asked one row
 * per hour or day, with the columns of the tables:
 *
 * - a source or monitor: its own rows, summed;
 * - a component: its own down, degraded and maintenance counts; for `checks` and `error_checks` the
 *   larger of its own and its source's '*' row's (the poller lists no components for a page it could
 *   not read, so '*' errors come only from rows written otherwise, such as tests').
 *   Rows written before 0005 (one per component and check) have no '*' row: a component is read from
 *   its own rows there, as before. After it, a component with no row of its own in an hour its source
 *   listed components was operational for those checks (one added in the hour counts from its start).
 *
 * The '*' row is joined once per component asked of its source, so the query stays one scan of the
 * rollup for any number of subjects. Needs `rollupParams` beside `querySubjects`' parameters
 * (`kinds`, `ids`, `components`); `range` filters on `time`.
 */
export const rollupRows = (table: "check_rollup_hourly" | "check_rollup_daily", time: "hour" | "day", range: string) => `
  SELECT subject_kind, subject_id, component AS component_id, at AS ${time},
    greatest(sumIf(n_checks, row_component = component), sumIf(n_checks, row_component = '*')) AS checks,
    sumIf(n_down, row_component = component) AS down_checks,
    sumIf(n_degraded, row_component = component) AS degraded_checks,
    sumIf(n_maintenance, row_component = component) AS maintenance_checks,
    greatest(sumIf(n_errors, row_component = component), sumIf(n_errors, row_component = '*')) AS error_checks
  FROM (
    SELECT subject_kind, subject_id, component_id AS row_component, ${time} AS at,
      checks AS n_checks, down_checks AS n_down, degraded_checks AS n_degraded,
      maintenance_checks AS n_maintenance, error_checks AS n_errors
    FROM ${table}
    WHERE subject_kind IN {kinds:Array(String)} AND subject_id IN {ids:Array(String)}
      AND (component_id IN {components:Array(String)} OR component_id = '*') AND ${range}
  )
  ARRAY JOIN if(
    row_component = '*',
    {components_of:Array(Array(String))}[indexOf({rollup_ids:Array(String)}, subject_id)],
    [row_component]
  ) AS component
  GROUP BY subject_kind, subject_id, component, at`

/**
 * `rollup_ids` (each subject id once) and `components_of`: for each of them, in the same order, the
 * components asked of that source, which its '*' rollup row stands for.
 */
export const rollupParams = (subjects: ReadonlyArray<HistorySubject>) => {
  const ids = [...new Set(subjects.map((s) => s.id))]
  const of = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]))
  for (const s of subjects) if (s.kind === "source" && s.component !== "") of.get(s.id)!.add(s.component)
  return { rollup_ids: ids, components_of: ids.map((id) => [...of.get(id)!]) }
}
