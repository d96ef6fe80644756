// The flashbar: one item per action's result. An accepted operation is followed here (live events, else a poll)
// from "in progress" to its end, with links to the operation and to what it acted on, while the user stays where
// they were.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { FlashbarProps } from "@cloudscape-design/components/flashbar";
import Link from "@cloudscape-design/components/link";
import { api } from "../api/client";
import type { Operation } from "../api/types";
import { useLiveEvents } from "./events";
import { resourceLink } from "./links";
import { applyEvent, isTerminal, operationTitle, stepLabel } from "./operation";
import { href } from "./router";
import { statusText } from "./status";

type Message = Omit<FlashbarProps.MessageDefinition, "id" | "onDismiss" | "dismissible">;

export interface FlashApi {
  items: FlashbarProps.MessageDefinition[];
  push: (m: Message) => void;
  /** Follow an accepted operation in the flashbar until it ends. */
  track: (op: Operation) => void;
}

const Ctx = createContext<FlashApi>({ items: [], push: () => {}, track: () => {} });
export const useFlash = () => useContext(Ctx);

const KEEP = 3;
const POLL_MS = 3000;

type Entry = { id: string; message?: Message; op?: Operation };

/** The flash of one operation: its title, status and step, links to it and to what it acted on. */
export function operationFlash(op: Operation): Message {
  const done = isTerminal(op);
  const res = resourceLink(op);
  const line = done
    ? statusText(op.status)
    : `${statusText(op.status)}${op.phase ? `: ${stepLabel(op.phase)}` : ""}`;
  return {
    type: op.status === "SUCCEEDED" ? "success" : op.status === "FAILED" ? "error" : op.status === "CANCELLED" ? "warning" : "in-progress",
    loading: !done,
    header: operationTitle(op),
    content: (
      <span data-testid="flash-operation" data-operation={op.id} data-status={op.status} data-kind={op.kind}>
        {line}
        {" · "}
        <Link color="inverted" href={href.operation(op.id)}>
          View operation
        </Link>
        {res && (
          <>
            {" · "}
            <Link color="inverted" href={res.href}>
              {res.text}
            </Link>
          </>
        )}
      </span>
    ),
  };
}

export function FlashProvider({ children }: { children: ReactNode }) {
  const [entries, setEntries] = useState<Entry[]>([]);
  const entriesRef = useRef(entries);
  entriesRef.current = entries;

  const add = useCallback((e: Entry) => {
    // the newest first (on top of a stacked flashbar)
    setEntries((prev) => [e, ...prev.filter((x) => x.id !== e.id).slice(0, KEEP - 1)]);
  }, []);
  const push = useCallback<FlashApi["push"]>((m) => add({ id: `${Date.now()}-${Math.random()}`, message: m }), [add]);
  const update = useCallback((op: Operation) => {
    setEntries((prev) => prev.map((e) => (e.op && e.op.id === op.id && (op.version ?? 0) >= (e.op.version ?? 0) ? { ...e, op } : e)));
  }, []);
  const track = useCallback<FlashApi["track"]>((op) => add({ id: op.id, op }), [add]);

  const refresh = useCallback(async (id: string) => {
    try {
      update(await api.operation(id));
    } catch {
      /* the next event or poll tries again */
    }
  }, [update]);

  // Live: apply the event at once, then read the record (the truth) shortly after.
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const live = useLiveEvents((ev) => {
    const id = ev.data?.operation_id;
    const entry = entriesRef.current.find((e) => e.op && e.op.id === id);
    if (!entry?.op) return;
    setEntries((prev) => prev.map((e) => (e.op && e.op.id === id ? { ...e, op: applyEvent(e.op, ev) } : e)));
    clearTimeout(timers.current.get(id!));
    timers.current.set(id!, setTimeout(() => void refresh(id!), 200));
  });
  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t)), []);

  // Without the live feed: poll the operations still running.
  const running = entries.filter((e) => e.op && !isTerminal(e.op)).map((e) => e.op!.id).join(",");
  useEffect(() => {
    if (!running) return;
    const ids = running.split(",");
    // one read now in any case (an event may have come before the flash was there), then poll while offline
    const first = setTimeout(() => ids.forEach((id) => void refresh(id)), 500);
    const t = live === "live" ? undefined : setInterval(() => ids.forEach((id) => void refresh(id)), POLL_MS);
    return () => {
      clearTimeout(first);
      if (t) clearInterval(t);
    };
  }, [running, live, refresh]);

  const items = useMemo<FlashbarProps.MessageDefinition[]>(
    () =>
      entries.map((e) => ({
        ...(e.op ? operationFlash(e.op) : e.message!),
        id: e.id,
        dismissible: true,
        dismissLabel: "Dismiss",
        onDismiss: () => setEntries((p) => p.filter((x) => x.id !== e.id)),
      })),
    [entries],
  );
  const value = useMemo(() => ({ items, push, track }), [items, push, track]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
