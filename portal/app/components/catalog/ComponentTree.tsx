import type { Component } from "#services/domain/api/Sources.ts"
import { fromComponentStatus } from "#services/domain/StatusWords.ts"
import { StatusBadge } from "../StatusBadge.tsx"

/** Groups open by default when the whole tree is this small, or when something inside is not operational. */
const openAllBelow = 40

const count = (nodes: ReadonlyArray<Component>): number => nodes.reduce((n, c) => n + 1 + count(c.children), 0)
const troubled = (c: Component): boolean => c.status !== "operational" || c.children.some(troubled)

/** A source's components as a tree: groups fold (`<details>`, no JavaScript needed), each row with its status. */
export function ComponentTree({ components }: { readonly components: ReadonlyArray<Component> }) {
  const small = count(components) <= openAllBelow
  return <ul className="tree" aria-label="Components">{components.map((c) => <Node key={c.id} component={c} small={small} />)}</ul>
}

function Row({ component }: { readonly component: Component }) {
  return (
    <span className="tree-row">
      <span className="name">
        {component.name}
        {component.region ? <span className="region-tag">{component.region}</span> : null}
      </span>
      <StatusBadge status={fromComponentStatus(component.status)} />
    </span>
  )
}

function Node({ component, small }: { readonly component: Component; readonly small: boolean }) {
  if (component.children.length === 0) return <li><Row component={component} /></li>
  return (
    <li>
      <details open={small || troubled(component)}>
        <summary><Row component={component} /></summary>
        <ul>{component.children.map((c) => <Node key={c.id} component={c} small={small} />)}</ul>
      </details>
    </li>
  )
}

/** The components one can add to a stack, grouped under their top-level parent ("" for those without one). */
export const pickableGroups = (components: ReadonlyArray<Component>): ReadonlyArray<{ readonly group: string; readonly items: ReadonlyArray<{ id: string; name: string }> }> => {
  const leaves = (c: Component, path: ReadonlyArray<string>): Array<{ id: string; name: string }> =>
    c.children.length === 0 ? [{ id: c.id, name: [...path, c.name].join(" › ") }] : c.children.flatMap((k) => leaves(k, [...path, c.name]))
  const loose = components.filter((c) => c.children.length === 0).map((c) => ({ id: c.id, name: c.name }))
  const groups = components.filter((c) => c.children.length > 0).map((c) => ({ group: c.name, items: c.children.flatMap((k) => leaves(k, [])) }))
  return loose.length === 0 ? groups : [{ group: "", items: loose }, ...groups]
}
