import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import { api } from "../api/client";
import type { Me } from "../api/types";

export interface MeState {
  me: Me | undefined;
  loading: boolean;
}

const Ctx = createContext<MeState>({ me: undefined, loading: false });

/** Who is signed in (GET /v1/me), loaded once per sign-in. */
export function MeProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<MeState>({ me: undefined, loading: true });
  useEffect(() => {
    let alive = true;
    api.me().then(
      (me) => alive && setState({ me, loading: false }),
      () => alive && setState({ me: undefined, loading: false }),
    );
    return () => {
      alive = false;
    };
  }, []);
  return <Ctx.Provider value={state}>{children}</Ctx.Provider>;
}

export const useMe = () => useContext(Ctx);

export const isAdmin = (me: Me | undefined) => !!me && (me.can_administer ?? me.role === "admin");

/** Why an admin's action is disabled for this user ("Only an admin can ... (you are operator)."), or undefined
 * when it is not (an admin, or nobody signed in yet: the API still checks the role). */
export function adminOnly(me: Me | undefined, action: string): string | undefined {
  return me && !isAdmin(me) ? `Only an admin can ${action} (you are ${me.role}).` : undefined;
}
export const canMutate = (me: Me | undefined) => !!me && (me.can_mutate ?? (me.role === "admin" || me.role === "operator"));

/** The identity as shown in the top bar: "sandbox-admin (admin)". */
export function identity(me: Me | undefined): string {
  if (!me) return "";
  const who = me.name || me.sub;
  return me.role ? `${who} (${me.role})` : who;
}
