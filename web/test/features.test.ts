import { describe, expect, it } from "vitest";
import type { FeaturesDocument, FeatureView } from "../src/api/types";
import { dependencyNotes, featuresPatch } from "../src/components/FeaturesPanel";

function f(title: string, enabled: boolean, depends_on: string[] = [], extra: Partial<FeatureView> = {}): FeatureView {
  return { title, summary: "", enabled, status: enabled ? "ACTIVE" : "DISABLED", depends_on, required_by: [], ...extra };
}

// training on (and its prerequisites), inference and the CSI drivers off, checkpointing on at 20%
const doc = {
  cert_manager: f("cert-manager", true),
  pod_identity_agent: f("EKS Pod Identity agent", true),
  s3_csi: f("S3 Mountpoint CSI driver", false, ["pod_identity_agent"]),
  fsx_csi: f("FSx for Lustre CSI driver", false),
  metrics_server: f("metrics-server", false),
  training_operator: f("HyperPod training operator", true, ["cert_manager", "pod_identity_agent"]),
  inference_operator: f("HyperPod inference operator", false, ["cert_manager", "s3_csi", "fsx_csi", "metrics_server", "pod_identity_agent"]),
  tiered_checkpointing: f("Managed tiered checkpointing", true, [], { memory_percent: 20 }),
  autoscaling: f("Managed autoscaling (Karpenter)", false, [], { instance_groups: [] }),
  observability: f("HyperPod observability", false, ["cert_manager", "pod_identity_agent", "metrics_server"]),
} as unknown as FeaturesDocument;

describe("featuresPatch (the diff contract)", () => {
  it("sends only the features and fields the user changed", () => {
    expect(featuresPatch(doc, { observability: { enabled: true } })).toEqual({ observability: { enabled: true } });
    expect(featuresPatch(doc, { tiered_checkpointing: { memory_percent: "30" } })).toEqual({ tiered_checkpointing: { memory_percent: 30 } });
  });

  it("sends nothing for a switch turned back to its live value or an untouched prerequisite", () => {
    expect(featuresPatch(doc, { training_operator: { enabled: true }, cert_manager: {}, tiered_checkpointing: { memory_percent: "20" } })).toEqual({});
  });

  it("compares instance groups as a set", () => {
    const on = { ...doc, autoscaling: f("Karpenter", true, [], { instance_groups: ["a", "b"] }) } as unknown as FeaturesDocument;
    expect(featuresPatch(on, { autoscaling: { instance_groups: ["b", "a"] } })).toEqual({});
    expect(featuresPatch(on, { autoscaling: { instance_groups: ["a"] } })).toEqual({ autoscaling: { instance_groups: ["a"] } });
  });
});

describe("dependencyNotes", () => {
  it("names the prerequisites a feature being turned on installs, transitively", () => {
    const notes = dependencyNotes(doc, { inference_operator: { enabled: true } });
    expect(notes.inference_operator).toBe("Needs S3 Mountpoint CSI driver, FSx for Lustre CSI driver, metrics-server: will be installed first.");
  });

  it("names the enabled feature that still needs one being turned off", () => {
    expect(dependencyNotes(doc, { cert_manager: { enabled: false } }).cert_manager).toMatch(/^Needed by HyperPod training operator: turn that off too/);
    expect(dependencyNotes(doc, { cert_manager: { enabled: false }, training_operator: { enabled: false } }).cert_manager).toBeUndefined();
  });

  it("says nothing when nothing is about to change", () => {
    expect(dependencyNotes(doc, {})).toEqual({});
  });
});
