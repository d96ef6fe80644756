import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";
import type { FlashbarProps } from "@cloudscape-design/components/flashbar";

export interface FlashApi {
  items: FlashbarProps.MessageDefinition[];
  push: (m: Omit<FlashbarProps.MessageDefinition, "id" | "onDismiss" | "dismissible">) => void;
}

const Ctx = createContext<FlashApi>({ items: [], push: () => {} });
export const useFlash = () => useContext(Ctx);

export function FlashProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<FlashbarProps.MessageDefinition[]>([]);
  const push = useCallback<FlashApi["push"]>((m) => {
    const id = `${Date.now()}-${Math.random()}`;
    setItems((prev) => [
      ...prev.slice(-3),
      { ...m, id, dismissible: true, dismissLabel: "Dismiss", onDismiss: () => setItems((p) => p.filter((x) => x.id !== id)) },
    ]);
  }, []);
  const value = useMemo(() => ({ items, push }), [items, push]);
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
