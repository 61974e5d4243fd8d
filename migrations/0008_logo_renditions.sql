-- Renditions are named after the master key plus a rendition set (src/images/keys.ts), so the
-- per-rendition key columns go. Existing rows become version 0 (master and greyscale) until
-- `npm run rerender` prepares their contrast-aware renditions from the kept originals.
ALTER TABLE `logos` ADD `renditions` text DEFAULT '{"version":0,"light":false,"dark":false,"plain":"master","vector":false}' NOT NULL;--> statement-breakpoint
ALTER TABLE `logos` DROP COLUMN `grey_key`;--> statement-breakpoint
ALTER TABLE `logos` DROP COLUMN `inverted_key`;--> statement-breakpoint
ALTER TABLE `logos` DROP COLUMN `inverted_grey_key`;