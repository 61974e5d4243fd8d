import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, apiClients } from "./accounts";

export const feedbackCategories = ["data_quality", "bug", "feature_request", "other"] as const;
export type FeedbackCategory = (typeof feedbackCategories)[number];

/**
 * Feedback sent through the MCP tool send_feedback, kept for the operator. Rows outlive the
 * account and client they came from (their ids are then cleared), so nothing reported is lost.
 */
export const feedback = sqliteTable(
  "feedback",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").references(() => accounts.id, { onDelete: "set null" }),
    /** The account's API client: what the daily limit of 5 counts against. */
    clientId: text("client_id").references(() => apiClients.id, { onDelete: "set null" }),
    /** The OAuth client (the agent application) the submission came through. */
    oauthClientId: text("oauth_client_id"),
    /** Start of the UTC day of `createdAt`, Unix milliseconds: the limit's window. */
    day: integer("day").notNull(),
    category: text("category", { enum: feedbackCategories }).notNull(),
    message: text("message").notNull(),
    domain: text("domain"),
    logoId: integer("logo_id"),
    tool: text("tool"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    index("feedback_client_day_idx").on(t.clientId, t.day),
    check("feedback_category_check", sql`${t.category} IN ('data_quality', 'bug', 'feature_request', 'other')`),
  ],
);

export type Feedback = typeof feedback.$inferSelect;
