import { useEffect, useState } from "react";

/** `value` once it has stopped changing for `ms` (e.g. a plan request that should not fire on every keystroke). */
export function useDebounced<T>(value: T, ms = 400): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}
