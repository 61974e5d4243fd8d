-- Companies that discovery created (every logo of theirs discovered) rank below every company of
-- the catalogue: a site's <title> must never take a catalogue company's name in name lookups and
-- search, where companies of one standing are ranked by id. Discovery now writes them at
-- prominence -1 (DISCOVERED_PROMINENCE, src/catalogue/provenance.ts), below the catalogue's
-- lowest (0). Those written before, at 0, move there, and their prefix-list entries with them:
-- taken off their lists and put back where they now rank above the list's floor, as the write
-- path moves a company whose prominence changed (searchPrefixUpkeep).
CREATE TABLE `discovered_companies_0013` (`company_id` integer PRIMARY KEY NOT NULL);
--> statement-breakpoint
INSERT INTO `discovered_companies_0013` (`company_id`)
SELECT c.`id` FROM `companies` c
WHERE c.`prominence` = 0
	AND EXISTS (SELECT 1 FROM `logos` l WHERE l.`company_id` = c.`id`)
	AND NOT EXISTS (SELECT 1 FROM `logos` l WHERE l.`company_id` = c.`id` AND l.`source_set` <> 'discovered');
--> statement-breakpoint
CREATE TABLE `discovered_entries_0013` (
	`kind` text NOT NULL,
	`prefix` text NOT NULL,
	`company_id` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `discovered_entries_0013` (`kind`, `prefix`, `company_id`)
SELECT p.`kind`, p.`prefix`, p.`company_id` FROM `search_prefixes` p
WHERE p.`company_id` IN (SELECT `company_id` FROM `discovered_companies_0013`);
--> statement-breakpoint
DELETE FROM `search_prefixes` WHERE `company_id` IN (SELECT `company_id` FROM `discovered_companies_0013`);
--> statement-breakpoint
UPDATE `companies` SET `prominence` = -1 WHERE `id` IN (SELECT `company_id` FROM `discovered_companies_0013`);
--> statement-breakpoint
INSERT INTO `search_prefixes` (`kind`, `prefix`, `company_id`, `prominence`)
SELECT e.`kind`, e.`prefix`, e.`company_id`, -1 FROM `discovered_entries_0013` e
LEFT JOIN `search_prefix_lists` l ON l.`kind` = e.`kind` AND l.`prefix` = e.`prefix`
WHERE l.`floor_company_id` IS NULL OR (-1, -e.`company_id`) > (l.`floor_prominence`, -l.`floor_company_id`);
--> statement-breakpoint
DROP TABLE `discovered_entries_0013`;
--> statement-breakpoint
DROP TABLE `discovered_companies_0013`;
