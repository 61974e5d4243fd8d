import packageJson from "../../package.json";

/** How the server names itself to clients, and the version send_feedback receipts carry. */
export const SERVER_INFO = { name: "logo-lookup", version: packageJson.version };
