import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import type { LiveEvent } from "../api/types";
import { getToken } from "../auth";

export type LiveState = "connecting" | "live" | "offline";
type Listener = (ev: LiveEvent) => void;

export interface LiveFeed {
  state: LiveState;
  subscribe: (fn: Listener) => () => void;
}

const noop: LiveFeed = { state: "offline", subscribe: () => () => {} };
export const LiveContext = createContext<LiveFeed>(noop);

export function useLive(): LiveFeed {
  return useContext(LiveContext);
}

/** Subscribe to live events for the component's lifetime. The handler may change between renders. */
export function useLiveEvents(handler: Listener): LiveState {
  const feed = useLive();
  const ref = useRef(handler);
  ref.current = handler;
  useEffect(() => feed.subscribe((ev) => ref.current(ev)), [feed]);
  return feed.state;
}

function wsUrl(configured?: string): string {
  if (configured) return configured;
  const proto = window.location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${window.location.host}/ws`;
}

/** One WebSocket for the app: authenticate with a first {"token"} message, reconnect with backoff. */
export function LiveProvider({ url, children }: { url?: string; children: ReactNode }) {
  const listeners = useRef(new Set<Listener>());
  const [state, setState] = useState<LiveState>("connecting");
  const [feed, setFeed] = useState<LiveFeed>(() => ({
    state: "connecting",
    subscribe: (fn) => {
      listeners.current.add(fn);
      return () => listeners.current.delete(fn);
    },
  }));

  useEffect(() => {
    let ws: WebSocket | null = null;
    let stopped = false;
    let delay = 1000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connect = () => {
      if (stopped) return;
      setState("connecting");
      try {
        ws = new WebSocket(wsUrl(url));
      } catch {
        setState("offline");
        timer = setTimeout(connect, delay);
        return;
      }
      ws.onopen = () => ws?.send(JSON.stringify({ token: getToken() ?? "" }));
      ws.onmessage = (m) => {
        let msg: { type?: string };
        try {
          msg = JSON.parse(String(m.data));
        } catch {
          return;
        }
        if (msg.type === "ready") {
          delay = 1000;
          setState("live");
          // A reconnect may have missed events: let listeners refresh.
          for (const fn of listeners.current) fn({ type: "event", detail_type: "Feed Ready", data: {} });
        } else if (msg.type === "event") {
          for (const fn of listeners.current) fn(msg as LiveEvent);
        }
      };
      ws.onclose = () => {
        setState("offline");
        if (!stopped) {
          timer = setTimeout(connect, delay);
          delay = Math.min(delay * 2, 30000);
        }
      };
      ws.onerror = () => ws?.close();
    };
    connect();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      ws?.close();
    };
  }, [url]);

  useEffect(() => setFeed((f) => (f.state === state ? f : { ...f, state })), [state]);
  return <LiveContext.Provider value={feed}>{children}</LiveContext.Provider>;
}
