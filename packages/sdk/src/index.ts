export { LogoLookup } from "./client.js";
export type { CompanyKey, Logo, LogoLookupEvents, LogoLookupOptions, LogoMetadata, LogoOptions, LogoResult } from "./types.js";
export {
  AuthenticationError,
  ConfigurationError,
  InvalidRequestError,
  LogoLookupError,
  NetworkError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  TakenDownError,
} from "./errors.js";
