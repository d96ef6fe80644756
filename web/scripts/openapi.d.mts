export const TARGET: string;
export function openapiDocument(): Record<string, unknown>;
export function generate(doc?: Record<string, unknown>): Promise<string>;
