// The one table: every list in the UI is a Cloudscape Table driven by useCollection, with a text filter (and the
// page's own filters beside it), sorting, pages, saved preferences (page size, columns shown and their order, line
// wrap, striped rows, column widths), a sticky header, resizable columns, and the actions column kept in view.
import { Suspense, lazy, useCallback, useMemo, useState, type ReactNode } from "react";
import { useCollection } from "@cloudscape-design/collection-hooks";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import type { CollectionPreferencesProps } from "@cloudscape-design/components/collection-preferences";
import Header from "@cloudscape-design/components/header";
import Pagination from "@cloudscape-design/components/pagination";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table, { type TableProps } from "@cloudscape-design/components/table";
import TextFilter from "@cloudscape-design/components/text-filter";
import { plural } from "../lib/format";

export interface Column<T> {
  id: string;
  header: string;
  cell: (item: T) => ReactNode;
  /** Sort by this value (a string, number or date string); without it the column does not sort. */
  sortValue?: (item: T) => string | number | null | undefined;
  /** The words the text filter matches in this column (default: its sort value). */
  filterText?: (item: T) => string | null | undefined;
  isRowHeader?: boolean;
  width?: number;
  minWidth?: number;
  /** Hidden until the user shows it in the preferences. */
  hidden?: boolean;
  /** Kept in view at the right edge (row actions): reachable at any width. */
  actions?: boolean;
}

interface Prefs {
  pageSize: number;
  wrapLines: boolean;
  stripedRows: boolean;
  contentDisplay: { id: string; visible: boolean }[];
  widths: Record<string, number>;
}

const PAGE_SIZES = [10, 20, 50, 100];

// The preferences dialog (columns with drag and drop) loads on first paint's heels, not in the first chunk: the
// gear shows at once (disabled until it has loaded).
const CollectionPreferences = lazy(() => import("@cloudscape-design/components/collection-preferences"));

function loadPrefs(id: string): Partial<Prefs> {
  try {
    return JSON.parse(localStorage.getItem(`podstart.table.${id}`) ?? "{}") as Partial<Prefs>;
  } catch {
    return {};
  }
}

function savePrefs(id: string, p: Prefs): void {
  try {
    localStorage.setItem(`podstart.table.${id}`, JSON.stringify(p));
  } catch {
    /* private mode: the preferences last this page */
  }
}

/** The preferences of one table, saved per table id in this browser. */
function usePrefs<T>(id: string, columns: Column<T>[], pageSize: number, wrap: boolean) {
  const [prefs, setPrefs] = useState<Prefs>(() => {
    const saved = loadPrefs(id);
    const known = new Set(columns.map((c) => c.id));
    const order = (saved.contentDisplay ?? []).filter((c) => known.has(c.id));
    const missing = columns.filter((c) => !order.some((o) => o.id === c.id)).map((c) => ({ id: c.id, visible: !c.hidden }));
    return {
      pageSize: saved.pageSize && PAGE_SIZES.includes(saved.pageSize) ? saved.pageSize : pageSize,
      wrapLines: saved.wrapLines ?? wrap,
      stripedRows: saved.stripedRows ?? false,
      contentDisplay: [...order, ...missing],
      widths: saved.widths ?? {},
    };
  });
  const update = useCallback((p: Partial<Prefs>) => {
    setPrefs((prev) => {
      const next = { ...prev, ...p };
      savePrefs(id, next);
      return next;
    });
  }, [id]);
  return [prefs, update] as const;
}

const compare = (a: string | number | null | undefined, b: string | number | null | undefined): number => {
  if (a === b) return 0;
  if (a === null || a === undefined || a === "") return 1; // unknowns last
  if (b === null || b === undefined || b === "") return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true });
};

export interface ResourceTableProps<T> {
  /** Preferences are saved under this id. */
  id: string;
  items: T[];
  columns: Column<T>[];
  trackBy: string | ((item: T) => string);
  /** The table's accessible name (and its heading). */
  title: string;
  headerVariant?: "awsui-h1-sticky" | "h2" | "h3";
  description?: ReactNode;
  actions?: ReactNode;
  /** Shown instead of "(n)" next to the title, e.g. "(12+)" when more are on the server. */
  counter?: string;
  variant?: TableProps.Variant;
  loading?: boolean;
  loadingText?: string;
  /** When there are no items at all. */
  empty?: ReactNode;
  filterPlaceholder?: string;
  /** The page's own filters (selects), beside the text filter. */
  filters?: ReactNode;
  defaultSort?: { column: string; descending?: boolean };
  pageSize?: number;
  selectionType?: TableProps.SelectionType;
  selectedItems?: T[];
  onSelectionChange?: (items: T[]) => void;
  isItemDisabled?: (item: T) => boolean;
  /** Rows the server still has: the last page's Next asks for them. */
  hasMore?: boolean;
  onLoadMore?: () => void;
  footer?: ReactNode;
  /** Wrap long cells until the user chooses otherwise (rich cells: descriptions, several lines). */
  wrapLines?: boolean;
  /** The table's data-testid (for tests and the bench). */
  testId?: string;
}

export function ResourceTable<T>(p: ResourceTableProps<T>) {
  const [prefs, setPrefs] = usePrefs(p.id, p.columns, p.pageSize ?? 20, p.wrapLines ?? false);
  const byId = useMemo(() => new Map(p.columns.map((c) => [c.id, c])), [p.columns]);
  const filterWords = useCallback(
    (item: T) => p.columns.map((c) => (c.filterText ?? c.sortValue)?.(item) ?? "").join(" \u0000 ").toLowerCase(),
    [p.columns],
  );
  const sortCol = p.defaultSort ? byId.get(p.defaultSort.column) : undefined;
  const { items, actions, collectionProps, filterProps, paginationProps, filteredItemsCount } = useCollection(p.items, {
    filtering: {
      empty: p.empty ?? <Box textAlign="center" color="inherit"><b>None</b></Box>,
      noMatch: (
        <Box textAlign="center" color="inherit">
          <SpaceBetween size="xxs">
            <b>No match</b>
            <Box color="inherit">Nothing matches the filter.</Box>
          </SpaceBetween>
        </Box>
      ),
      filteringFunction: (item, text) => !text || filterWords(item).includes(text.toLowerCase()),
    },
    sorting: sortCol?.sortValue
      ? { defaultState: { sortingColumn: { sortingField: sortCol.id, sortingComparator: (a: T, b: T) => compare(sortCol.sortValue!(a), sortCol.sortValue!(b)) }, isDescending: !!p.defaultSort?.descending } }
      : {},
    pagination: { pageSize: prefs.pageSize },
    selection: p.selectionType ? { trackBy: p.trackBy, keepSelection: true } : undefined,
  });
  const defs = columnDefs(p.columns, prefs);
  const visible = prefs.contentDisplay.filter((c) => c.visible && byId.has(c.id)).map((c) => c.id);
  const hasActions = p.columns.some((c) => c.actions && visible.includes(c.id));
  const onPage = (detail: { requestedPageAvailable: boolean }) => {
    if (!detail.requestedPageAvailable && p.hasMore) p.onLoadMore?.();
  };
  const total = p.items.length;
  const shown = filterProps.filteringText ? filteredItemsCount ?? 0 : total;
  return (
    <div data-testid={p.testId} data-rows={total}>
      <Table<T>
        {...collectionProps}
        trackBy={p.trackBy}
        items={items as T[]}
        columnDefinitions={defs}
        columnDisplay={prefs.contentDisplay}
        variant={p.variant ?? "container"}
        loading={p.loading && total === 0}
        loadingText={p.loadingText ?? "Loading"}
        ariaLabels={{
          tableLabel: p.title,
          selectionGroupLabel: `${p.title} selection`,
          allItemsSelectionLabel: () => `Select all ${p.title.toLowerCase()} on this page`,
          itemSelectionLabel: (_s, item) => `Select ${typeof p.trackBy === "function" ? p.trackBy(item) : String((item as Record<string, unknown>)[p.trackBy])}`,
          resizerRoleDescription: "Resize button",
          activateEditLabel: undefined,
        }}
        renderAriaLive={({ firstIndex, lastIndex, totalItemsCount }) => `${p.title}: ${firstIndex} to ${lastIndex} of ${totalItemsCount}`}
        selectionType={p.selectionType}
        selectedItems={p.selectionType ? p.selectedItems ?? (collectionProps.selectedItems as T[]) : undefined}
        onSelectionChange={p.selectionType ? (e) => {
          collectionProps.onSelectionChange?.(e);
          p.onSelectionChange?.(e.detail.selectedItems as T[]);
        } : undefined}
        isItemDisabled={p.isItemDisabled}
        wrapLines={prefs.wrapLines}
        stripedRows={prefs.stripedRows}
        stickyHeader={p.variant !== "embedded"}
        resizableColumns
        onColumnWidthsChange={({ detail }) => {
          const widths: Record<string, number> = {};
          defs.forEach((d, i) => { if (d.id && detail.widths[i]) widths[d.id] = detail.widths[i]; });
          setPrefs({ widths: { ...prefs.widths, ...widths } });
        }}
        stickyColumns={hasActions ? { first: 0, last: 1 } : undefined}
        header={
          <Header
            variant={p.headerVariant ?? "h2"}
            counter={p.counter ?? (p.loading && !total ? undefined : filterProps.filteringText ? `(${shown}/${total})` : `(${total})`)}
            description={p.description}
            actions={p.actions}
          >
            {p.title}
          </Header>
        }
        filter={
          <div className="ps-table-filters">
            <TextFilter
              {...filterProps}
              filteringPlaceholder={p.filterPlaceholder ?? `Find ${p.title.toLowerCase()}`}
              filteringAriaLabel={`Filter ${p.title.toLowerCase()}`}
              countText={filterProps.filteringText ? plural(shown, "match") : undefined}
              filteringClearAriaLabel="Clear the filter"
            />
            {p.filters}
          </div>
        }
        pagination={<Pagination {...paginationProps} openEnd={p.hasMore} onNextPageClick={({ detail }) => onPage(detail)}
          ariaLabels={{ nextPageLabel: "Next page", previousPageLabel: "Previous page", pageLabel: (n) => `Page ${n}` }} />}
        preferences={
          <Suspense fallback={<Button variant="icon" iconName="settings" ariaLabel="Preferences" disabled />}>
          <CollectionPreferences
            title="Preferences"
            confirmLabel="Confirm"
            cancelLabel="Cancel"
            preferences={{ pageSize: prefs.pageSize, wrapLines: prefs.wrapLines, stripedRows: prefs.stripedRows, contentDisplay: prefs.contentDisplay }}
            onConfirm={({ detail }: { detail: CollectionPreferencesProps.Preferences }) => {
              setPrefs({
                pageSize: detail.pageSize ?? prefs.pageSize,
                wrapLines: detail.wrapLines ?? prefs.wrapLines,
                stripedRows: detail.stripedRows ?? prefs.stripedRows,
                contentDisplay: (detail.contentDisplay ?? prefs.contentDisplay).map((c) => ({ id: c.id, visible: c.visible })),
              });
              actions.setCurrentPage(1);
            }}
            pageSizePreference={{ title: "Rows per page", options: PAGE_SIZES.map((n) => ({ value: n, label: `${n} rows` })) }}
            wrapLinesPreference={{ label: "Wrap lines", description: "Show long values on several lines" }}
            stripedRowsPreference={{ label: "Striped rows" }}
            contentDisplayPreference={{
              title: "Columns",
              options: p.columns.map((c) => ({ id: c.id, label: c.header || c.id, alwaysVisible: c.isRowHeader })),
            }}
          />
          </Suspense>
        }
        footer={p.footer}
      />
    </div>
  );
}

function columnDefs<T>(columns: Column<T>[], prefs: Prefs): TableProps.ColumnDefinition<T>[] {
  return columns.map((c) => ({
    id: c.id,
    header: c.header,
    cell: c.cell,
    isRowHeader: c.isRowHeader,
    width: prefs.widths[c.id] ?? c.width,
    minWidth: c.minWidth ?? (c.actions ? 120 : 90),
    // sortingField names the column (the Table matches the sorted column by it); the comparator sorts
    sortingField: c.sortValue ? c.id : undefined,
    sortingComparator: c.sortValue ? (a: T, b: T) => compare(c.sortValue!(a), c.sortValue!(b)) : undefined,
  }));
}
