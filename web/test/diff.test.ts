import { describe, expect, it } from "vitest";
import { changedFields, isEmpty } from "../src/lib/diff";

describe("changedFields (the diff contract)", () => {
  it("sends nothing when nothing changed", () => {
    expect(changedFields({ instance_count: 4 }, { instance_count: 4 })).toEqual({});
    expect(isEmpty(changedFields({ instance_count: 4 }, { instance_count: 4 }))).toBe(true);
  });

  it("sends only the changed field", () => {
    const original = { instance_count: 4, instance_type: "ml.p5.48xlarge", efa_only: false };
    const edited = { instance_count: 6, instance_type: "ml.p5.48xlarge", efa_only: false };
    expect(changedFields(original, edited)).toEqual({ instance_count: 6 });
  });

  it("treats undefined in the edit as untouched, not as a change to undefined", () => {
    expect(changedFields({ instance_count: 4, name: "a" }, { instance_count: undefined, name: "b" })).toEqual({ name: "b" });
  });

  it("sends a change to null or to false (explicit values)", () => {
    expect(changedFields<{ active_cluster: { name: string; region: string } | null }>({ active_cluster: { name: "a", region: "us-west-2" } }, { active_cluster: null })).toEqual({ active_cluster: null });
    expect(changedFields({ efa_only: true }, { efa_only: false })).toEqual({ efa_only: false });
  });

  it("compares nested objects and arrays by value and sends a changed one whole", () => {
    expect(changedFields({ active_cluster: { name: "a", region: "r" } }, { active_cluster: { region: "r", name: "a" } })).toEqual({});
    expect(changedFields({ checks: ["InstanceStress"] }, { checks: ["InstanceStress"] })).toEqual({});
    expect(changedFields({ checks: ["InstanceStress"] }, { checks: ["InstanceStress", "InstanceConnectivity"] })).toEqual({
      checks: ["InstanceStress", "InstanceConnectivity"],
    });
  });

  it("does not equate 0 with missing or '4' with 4", () => {
    expect(changedFields<Record<string, unknown>>({}, { instance_count: 0 })).toEqual({ instance_count: 0 });
    expect(changedFields<Record<string, unknown>>({ instance_count: 4 }, { instance_count: "4" })).toEqual({ instance_count: "4" });
  });
});
