export * from "./catalogue";
export * from "./accounts";
export * from "./feedback";
export * from "./billing";
export * from "./corrections";
