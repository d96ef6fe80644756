import { useCallback, useEffect, useRef, useState } from "react";
import { ApiError } from "../api/client";

export interface AsyncState<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Run `fn` when `deps` change (skip when `enabled` is false); the latest call wins. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[], enabled = true): AsyncState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | Error | undefined>(undefined);
  const [loading, setLoading] = useState(enabled);
  const seq = useRef(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const run = useCallback(
    (quiet = false) => {
      const n = ++seq.current;
      if (!quiet) setLoading(true);
      fnRef
        .current()
        .then((d) => {
          if (n === seq.current) {
            setData(d);
            setError(undefined);
          }
        })
        .catch((e: Error) => {
          if (n === seq.current) setError(e);
        })
        .finally(() => {
          if (n === seq.current) setLoading(false);
        });
    },
    [],
  );
  useEffect(() => {
    if (!enabled) {
      seq.current++;
      setData(undefined);
      setLoading(false);
      return;
    }
    run();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [enabled, ...deps]);
  return { data, error, loading, reload: () => run(true) };
}

/** Catalog reads change rarely: cache them per URL for the session. */
const cache = new Map<string, Promise<unknown>>();
export function cached<T>(key: string, fn: () => Promise<T>): Promise<T> {
  let p = cache.get(key) as Promise<T> | undefined;
  if (!p) {
    p = fn();
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}
export function dropCache(prefix: string): void {
  for (const k of cache.keys()) if (k.startsWith(prefix)) cache.delete(k);
}
