import { memo, useRef, type ReactNode } from "react";
import { useVirtualizer } from "@tanstack/react-virtual";

export interface Column<T> {
  id: string;
  header: string;
  cell: (item: T) => ReactNode;
  width?: number | string;
}

/** One row; memoized so that a scroll renders only the rows coming into view, not every row still in it. */
const Row = memo(function Row({ item, index, columns, height }: { item: unknown; index: number; columns: Column<never>[]; height: number }) {
  return (
    <tr aria-rowindex={index + 2} style={{ height }}>
      {columns.map((c) => (
        <td key={c.id}>{c.cell(item as never)}</td>
      ))}
    </tr>
  );
});

/**
 * A virtualized table for long lists (thousands of operations): a real <table> with sticky header,
 * rendering only the rows in view plus an overscan, with spacer rows keeping the scroll height.
 * Rows are reachable by keyboard (the scroll region is focusable; links in cells are tabbable).
 */
export function VirtualTable<T>({
  items,
  columns,
  rowKey,
  label,
  height = 560,
  rowHeight = 41,
  empty,
}: {
  items: T[];
  columns: Column<T>[];
  rowKey: (item: T) => string;
  label: string;
  height?: number;
  rowHeight?: number;
  empty?: ReactNode;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({
    count: items.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 12,
    initialRect: { width: 1000, height },
  });
  const rows = v.getVirtualItems();
  const top = rows.length ? rows[0].start : 0;
  const bottom = rows.length ? v.getTotalSize() - rows[rows.length - 1].end : 0;
  return (
    <div
      ref={scroller}
      className="ps-vtable-scroll"
      style={{ maxHeight: height }}
      tabIndex={0}
      role="region"
      aria-label={`${label} (scrollable)`}
    >
      <table className="ps-vtable" aria-label={label} aria-rowcount={items.length + 1} data-rows={items.length}>
        <thead>
          <tr aria-rowindex={1}>
            {columns.map((c) => (
              <th key={c.id} scope="col" style={{ width: c.width }}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.length === 0 && (
            <tr>
              <td colSpan={columns.length} className="ps-vtable-empty">
                {empty ?? "No items"}
              </td>
            </tr>
          )}
          {top > 0 && (
            <tr aria-hidden="true" style={{ height: top }}>
              <td colSpan={columns.length} />
            </tr>
          )}
          {rows.map((r) => {
            const item = items[r.index];
            return <Row key={rowKey(item)} item={item} index={r.index} columns={columns as Column<never>[]} height={rowHeight} />;
          })}
          {bottom > 0 && (
            <tr aria-hidden="true" style={{ height: bottom }}>
              <td colSpan={columns.length} />
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
