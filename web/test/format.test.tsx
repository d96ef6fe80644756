import { render } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { SIGNED_IN_EVENT, getToken, setToken, watchTokenLinks } from "../src/auth";
import { countsLong, countsShort, groupLine, jsonView, text } from "../src/lib/format";
import { parseRoute } from "../src/lib/router";
import { GroupsCell, groupsText } from "../src/pages/Clusters";
import { StorageTable, pvcText, storageState } from "../src/pages/ClusterDetail";
import { importBody } from "../src/pages/ImportCluster";
import type { ClusterInstanceGroup, StorageItem } from "../src/api/types";

const BANNED = /null|undefined|NaN|\[object Object\]/;

/** A full instance-group row as the API documents it, with the fields a test cares about overridden. */
function group(over: Partial<ClusterInstanceGroup>): ClusterInstanceGroup {
  return { name: "accel", instance_type: "ml.p5.48xlarge", availability_zone: "us-west-2a", capacity_type: "on-demand",
           efa_only: false, instance_count: 2, target_count: 2, ...over };
}

describe("counts: show what is known", () => {
  it("never shows null for a group whose current count was not observed", () => {
    const g = { name: "accel", instance_type: "ml.p5.48xlarge", target_count: 2, current_count: null, counts_as_of: null };
    expect(groupLine(g)).toBe("accel: 2 × ml.p5.48xlarge");
    expect(countsLong(g)).toBe("target 2 (current count not observed yet)");
  });

  it("shows current/target when they differ, one number when they agree", () => {
    expect(groupLine({ name: "accel", instance_type: "ml.p5.48xlarge", target_count: 2, current_count: 1 })).toBe("accel: 1/2 × ml.p5.48xlarge");
    expect(countsShort({ target_count: 2, current_count: 2 })).toBe("2");
    expect(countsLong({ target_count: 2, current_count: 1 })).toBe("1 of 2 running");
  });

  it("falls back to the record's instance_count, and says nothing rather than NaN", () => {
    expect(countsShort({ instance_count: 3 })).toBe("3");
    expect(groupLine({ name: "x", instance_type: null, target_count: Number.NaN, current_count: undefined })).toBe("x");
    expect(text(Number.NaN)).toBe("—");
    expect(text({ a: 1 })).toBe("—");
    expect(text(null)).toBe("—");
  });

  it("the clusters list cell shows when the counts were observed", () => {
    const { container } = render(
      <GroupsCell cluster={{ instance_groups: [group({ current_count: 1, counts_as_of: "2026-01-01T10:32:00" })] }} />,
    );
    expect(container.textContent).toContain("accel: 1/2 × ml.p5.48xlarge");
    // one time format: relative words, the absolute time with its zone on hover
    const time = container.querySelector("time")!;
    expect(container.textContent).toMatch(/counts observed .*ago/);
    expect(time.getAttribute("title")).toMatch(/^Jan 1, 2026, 10:32:00 \S+$/); // local, the zone named
    expect(time.getAttribute("dateTime")).toBe(new Date("2026-01-01T10:32:00").toISOString());
    const unknown = render(<GroupsCell cluster={{ instance_groups: [group({ current_count: null })] }} />);
    expect(unknown.container.textContent).not.toMatch(BANNED);
    expect(groupsText({ instance_groups: null } as unknown as Parameters<typeof groupsText>[0])).toBe("");
  });

  it("drops nulls from JSON shown on a page", () => {
    expect(jsonView({ name: "llm", kubernetes_version: null, groups: [{ a: null, b: 1 }] })).not.toMatch(BANNED);
    expect(jsonView(null)).toBe("{}");
  });
});

describe("storage status", () => {
  const fsx: StorageItem = { name: "podstart-fsx", kind: "fsx-lustre", status: "CREATING", file_system_id: "fs-0123", lifecycle: "CREATING", pvc: { name: "fsx-claim", namespace: "default", phase: "Pending" } };
  const s3: StorageItem = { name: "podstart-data", kind: "s3-mountpoint", status: "Bound", bucket: "podstart-data-123", pvc: { name: "s3-claim", namespace: "default", phase: "Bound" } };

  it("shows the FSx lifecycle and each PVC's binding, never Unknown", () => {
    const { container } = render(<StorageTable items={[fsx, s3]} />);
    const rows = [...container.querySelectorAll("tbody tr")].map((r) => r.textContent ?? "");
    expect(rows[0]).toContain("FSx for Lustre");
    expect(rows[0]).toContain("fs-0123");
    expect(rows[0]).toContain("Creating"); // one status component, words the same way for every source
    expect(rows[0]).toContain("Pending (fsx-claim in default)");
    expect(rows[1]).toContain("S3 (Mountpoint)");
    expect(rows[1]).toContain("Bound (s3-claim in default)");
    expect(container.textContent).not.toMatch(/Unknown/);
    expect(container.textContent).not.toMatch(BANNED);
  });

  it("reads the older shape without showing null", () => {
    const older = { name: "podstart-fsx", kind: "fsx-lustre", file_system_id: "fs-1" } as unknown as StorageItem;
    expect(storageState(older)).toBeUndefined();
    expect(pvcText({ ...older, pvc: null })).toBe("No claim");
    const { container } = render(<StorageTable items={[older]} />);
    expect(container.textContent).not.toMatch(BANNED);
    expect(container.textContent).not.toMatch(/Unknown/);
  });
});

describe("sign-in links", () => {
  it("never routes to, or shows, a token", () => {
    expect(parseRoute("#token=abc")).toEqual({ page: "clusters" });
    expect(parseRoute("#/operations?token=abc")).toEqual({ page: "clusters" });
  });

  it("a link opened in a signed-in tab switches the user and strips the token", () => {
    setToken("old-admin-token");
    window.history.replaceState(null, "", "/#/operations");
    const stop = watchTokenLinks();
    const signedIn = vi.fn();
    window.addEventListener(SIGNED_IN_EVENT, signedIn);
    window.history.replaceState(null, "", "/#token=new-viewer-token");
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    expect(getToken()).toBe("new-viewer-token");
    expect(window.location.href).not.toContain("new-viewer-token");
    expect(window.location.hash).toBe("#/clusters");
    expect(signedIn).toHaveBeenCalledOnce();
    // A plain navigation afterwards is not a sign-in.
    window.history.replaceState(null, "", "/#/operations");
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    expect(signedIn).toHaveBeenCalledOnce();
    stop();
    window.removeEventListener(SIGNED_IN_EVENT, signedIn);
  });
});

describe("import request", () => {
  it("sends the PodStart name only when given", () => {
    expect(importBody("us-west-2", " theirs ", "")).toEqual({ region: "us-west-2", eks_cluster_name: "theirs" });
    expect(importBody("us-west-2", "theirs", "ours")).toEqual({ region: "us-west-2", eks_cluster_name: "theirs", name: "ours" });
  });
});
