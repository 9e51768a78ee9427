// JSON values as records carry them (task arguments, results, checkpoints) and the store keeps
// them in text columns.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type JsonObject = { [key: string]: JsonValue };
