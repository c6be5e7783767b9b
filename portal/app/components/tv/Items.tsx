import { StatusBadge } from "../StatusBadge.tsx"
import type { ScreenItem } from "./screen.ts"

/** A stack's items, each with its status (icon + word + colour), worst first is left to the stack's order. */
export function Items({ items, label }: { readonly items: ReadonlyArray<ScreenItem>; readonly label: string }) {
  if (items.length === 0) return <p className="muted">Nothing in this stack yet.</p>
  return (
    <ul className="screen-items" aria-label={label}>
      {items.map((item) => (
        <li key={item.key} className={`screen-item shown-${item.shown}`}>
          <span className="screen-item-name">
            {item.name}
            <span className="screen-item-group">{item.group}</span>
          </span>
          <StatusBadge status={item.shown} />
        </li>
      ))}
    </ul>
  )
}
