export const TARGET: string;
export const RULES_TARGET: string;
export function openapiDocument(): Record<string, unknown>;
export function generate(doc?: Record<string, unknown>): Promise<string>;
export function rules(doc: Record<string, unknown>): string;
