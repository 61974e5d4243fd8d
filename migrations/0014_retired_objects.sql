-- Objects of images a write replaced, kept two days before they are deleted, so that redirects
-- cached before the replacement still find their image (src/catalogue/retiredObjects.ts).
CREATE TABLE `retired_objects` (
	`key` text PRIMARY KEY NOT NULL,
	`delete_after` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `retired_objects_delete_after_idx` ON `retired_objects` (`delete_after`);