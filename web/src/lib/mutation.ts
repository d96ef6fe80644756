// One way to run a mutation from the UI: busy state, problem+json errors on the form's fields, an
// Idempotency-Key per user action, and what happens after (202 -> a flash following the operation while the user
// stays where they were, 200 {"changed": false} -> "nothing to change").
import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError, newIdempotencyKey, type Answer } from "../api/client";
import type { Operation } from "../api/types";
import { useFlash } from "./flash";
import { mapProblem } from "./problems";

export type MutationOutcome<R> =
  | { kind: "accepted"; operation: Operation }
  | { kind: "unchanged"; body: R }
  | { kind: "done"; body: R }
  | { kind: "failed"; error: Error };

export interface MutationOptions<R> {
  /** Form paths the page renders (see mapProblem): errors at these paths show on the fields. */
  fields?: string[];
  /** Rename server paths to form paths, e.g. {"instance_groups.0": "group"}. */
  aliases?: Record<string, string>;
  /** After a 202, instead of the default: a flash follows the operation (links to it and to what it acted on)
   * and the user stays on the page. */
  onAccepted?: (op: Operation) => void;
  /** After a 202, besides the default flash (e.g. close the dialog the action was made in). */
  afterAccepted?: (op: Operation) => void;
  /** After a 2xx that is not an operation and changed something (e.g. PUT /v1/preferences). */
  onDone?: (body: R) => void;
  /** After 200 {"changed": false}. The hook also shows `unchangedMessage`. */
  onUnchanged?: (body: R) => void;
  unchangedMessage?: string;
  /** Client retries after a network error or a gateway 502/503/504, with the same key. Default 2. */
  retries?: number;
  /** Delay before the first client retry (doubles each time). Default 600 ms. */
  retryDelayMs?: number;
}

export interface Mutation<A, R> {
  /** Run the mutation for one user action (ignored while one is running). */
  run: (args: A) => Promise<MutationOutcome<R> | undefined>;
  busy: boolean;
  /** form path -> message, from the last refusal. */
  fieldErrors: Record<string, string>;
  /** Messages no field claimed (or the failure itself). */
  errors: string[];
  /** "Nothing to change ..." after a 200 {"changed": false}. */
  notice: string | undefined;
  /** Forget the error on fields the user has just edited. */
  clearField: (...paths: string[]) => void;
  reset: () => void;
}

/** Whether the server may or may not have applied the request (so a resend must reuse the key). */
function outcomeUnknown(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504);
}

function isOperation(body: unknown): body is Operation {
  return !!body && typeof body === "object" && typeof (body as Operation).id === "string" && Array.isArray((body as Operation).steps);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `send(args, key)` performs the request with the given Idempotency-Key. Each `run` is one user
 * action and gets a fresh key; the hook's own retries after a network error reuse it, and so does the
 * user's next submit of the same arguments when the last outcome was unknown (the first request may
 * have been applied: the server answers the same operation instead of starting a second one).
 */
export function useMutation<A, R = unknown>(
  send: (args: A, idempotencyKey: string) => Promise<Answer<R>>,
  options: MutationOptions<R> = {},
): Mutation<A, R> {
  const [busy, setBusy] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<string[]>([]);
  const [notice, setNotice] = useState<string | undefined>();
  const live = useRef(true);
  const running = useRef(false);
  const pending = useRef<{ args: string; key: string } | null>(null);
  const flash = useFlash();
  const flashRef = useRef(flash);
  flashRef.current = flash;
  const sendRef = useRef(send);
  sendRef.current = send;
  const optsRef = useRef(options);
  optsRef.current = options;
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);

  const run = useCallback(async (args: A): Promise<MutationOutcome<R> | undefined> => {
    if (running.current) return undefined;
    running.current = true;
    const o = optsRef.current;
    const fingerprint = JSON.stringify(args ?? null);
    const key = pending.current && pending.current.args === fingerprint ? pending.current.key : newIdempotencyKey();
    pending.current = { args: fingerprint, key };
    setBusy(true);
    setErrors([]);
    setNotice(undefined);
    let outcome: MutationOutcome<R>;
    try {
      const retries = o.retries ?? 2;
      let delay = o.retryDelayMs ?? 600;
      let answer: Answer<R> | undefined;
      for (let attempt = 0; ; attempt++) {
        try {
          answer = await sendRef.current(args, key);
          break;
        } catch (e) {
          if (!outcomeUnknown(e) || attempt >= retries) throw e;
          await sleep(delay);
          delay *= 2;
        }
      }
      pending.current = null;
      const body = answer.body;
      if (answer.status === 202 && isOperation(body)) {
        outcome = { kind: "accepted", operation: body };
      } else if (body && typeof body === "object" && (body as { changed?: unknown }).changed === false) {
        outcome = { kind: "unchanged", body };
      } else {
        outcome = { kind: "done", body };
      }
      if (live.current) setFieldErrors({});
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      outcome = { kind: "failed", error };
      if (!outcomeUnknown(e)) pending.current = null; // a refusal changed nothing: a new submit gets a new key
      if (live.current) {
        if (e instanceof ApiError && e.status !== 0) {
          const m = mapProblem(e.problem, o.fields ?? [], o.aliases);
          setFieldErrors(m.fields);
          setErrors(m.unclaimed);
        } else {
          setFieldErrors({});
          setErrors([
            outcomeUnknown(e)
              ? `${error.message}. Submitting again is safe: it resends the same request (same Idempotency-Key).`
              : error.message,
          ]);
        }
      }
    } finally {
      running.current = false;
      if (live.current) setBusy(false);
    }
    if (outcome.kind === "accepted") {
      if (o.onAccepted) o.onAccepted(outcome.operation);
      else {
        flashRef.current.track(outcome.operation);
        o.afterAccepted?.(outcome.operation);
      }
    } else if (outcome.kind === "unchanged") {
      if (live.current) setNotice(o.unchangedMessage ?? "Nothing to change: it is already as requested.");
      o.onUnchanged?.(outcome.body);
    } else if (outcome.kind === "done") {
      o.onDone?.(outcome.body);
    }
    return outcome;
  }, []);

  const clearField = useCallback((...paths: string[]) => {
    setFieldErrors((prev) => {
      if (!paths.some((p) => p in prev)) return prev;
      const next = { ...prev };
      for (const p of paths) delete next[p];
      return next;
    });
    setNotice(undefined);
  }, []);

  const reset = useCallback(() => {
    setFieldErrors({});
    setErrors([]);
    setNotice(undefined);
  }, []);

  return { run, busy, fieldErrors, errors, notice, clearField, reset };
}
