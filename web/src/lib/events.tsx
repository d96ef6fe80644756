import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import type { LiveEvent } from "../api/types";
import { getToken } from "../auth";

export type LiveState = "connecting" | "live" | "offline";
type Listener = (ev: LiveEvent) => void;

/** What a followed stream hears (the socket's protocol, functions/domain/live.py). "restart": the socket
 * reconnected and the follow was sent again, so its history comes again: drop what was shown. */
export type FollowMessage =
  | { type: "log"; id: string; pod: string; container?: string | null; lines: string[] }
  | { type: "log_end"; id: string; reason: string }
  | { type: "error"; id?: string; status: number; title: string; detail: string }
  | { type: "restart"; id: string };

export interface FollowRequest {
  cluster: string;
  region?: string;
  job: string;
  namespace?: string;
  pod?: string;
  container?: string;
  tail?: number;
}

export interface LiveFeed {
  state: LiveState;
  subscribe: (fn: Listener) => () => void;
  /** Follow a job pod's log over the socket until the returned function is called (which unfollows). */
  follow: (req: FollowRequest, fn: (m: FollowMessage) => void) => () => void;
}

const noop: LiveFeed = { state: "offline", subscribe: () => () => {}, follow: () => () => {} };
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

let nextFollow = 0;

/** One WebSocket for the app: authenticate (sandbox: a first {"token"} message; deployed: the token as a
 * sub-protocol), reconnect with backoff; log follows ride on it and are sent again after a reconnect. */
export function LiveProvider({ url, children }: { url?: string; children: ReactNode }) {
  const listeners = useRef(new Set<Listener>());
  const follows = useRef(new Map<string, { req: FollowRequest; fn: (m: FollowMessage) => void }>());
  const socket = useRef<WebSocket | null>(null);
  const ready = useRef(false);
  const [state, setState] = useState<LiveState>("connecting");
  const [feed, setFeed] = useState<LiveFeed>(() => ({
    state: "connecting",
    subscribe: (fn) => {
      listeners.current.add(fn);
      return () => listeners.current.delete(fn);
    },
    follow: (req, fn) => {
      const id = `f${++nextFollow}`;
      follows.current.set(id, { req, fn });
      if (ready.current) socket.current?.send(JSON.stringify({ action: "follow_logs", id, ...req }));
      return () => {
        follows.current.delete(id);
        if (ready.current) socket.current?.send(JSON.stringify({ action: "unfollow", id }));
      };
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
        // Deployed (a configured wsUrl): the Cognito token goes as a sub-protocol, checked by the $connect
        // authorizer before the socket opens. The sandbox's /ws reads it from the first message instead.
        ws = url ? new WebSocket(url, ["podstart", getToken() ?? ""]) : new WebSocket(wsUrl(url));
        socket.current = ws;
      } catch {
        setState("offline");
        timer = setTimeout(connect, delay);
        return;
      }
      ws.onopen = () => {
        if (!url) ws?.send(JSON.stringify({ token: getToken() ?? "" }));
        else {
          // API Gateway sends no "ready": the socket is authorized once open
          ws?.dispatchEvent(new MessageEvent("message", { data: JSON.stringify({ type: "ready" }) }));
        }
      };
      ws.onmessage = (m) => {
        let msg: { type?: string; id?: string };
        try {
          msg = JSON.parse(String(m.data));
        } catch {
          return;
        }
        if (msg.type === "ready") {
          delay = 1000;
          ready.current = true;
          setState("live");
          for (const [id, f] of follows.current) {
            f.fn({ type: "restart", id });
            ws?.send(JSON.stringify({ action: "follow_logs", id, ...f.req }));
          }
          // A reconnect may have missed events: let listeners refresh.
          for (const fn of listeners.current) fn({ type: "event", detail_type: "Feed Ready", data: {} });
        } else if (msg.type === "event") {
          for (const fn of listeners.current) fn(msg as LiveEvent);
        } else if (msg.id && follows.current.has(msg.id)) {
          follows.current.get(msg.id)?.fn(msg as FollowMessage);
        }
      };
      ws.onclose = () => {
        ready.current = false;
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
