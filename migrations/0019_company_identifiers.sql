-- ISINs and crypto symbols, one company each (schema/catalogue.ts, companyIdentifiers).
-- WITHOUT ROWID, as company_tickers: the text key is stored once. drizzle-kit cannot describe
-- that; its snapshot knows the table as an ordinary one.
CREATE TABLE `company_identifiers` (
	`scheme` text NOT NULL,
	`value` text NOT NULL,
	`company_id` integer NOT NULL,
	PRIMARY KEY(`scheme`, `value`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE INDEX `company_identifiers_company_idx` ON `company_identifiers` (`company_id`);
