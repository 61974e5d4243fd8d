import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The order the projects' files are handed to the workers: the Worker's first, then the
 * browser's, then the tools'. Within a project, vitest's own order (longest first, when it has
 * timed them; larger files first on a fresh clone).
 *
 * The Worker's two runtimes take ~10 s to start, part of it waiting, and the tools' migrated
 * state and the browser files' bundle take ~20 s to make (./background.ts): started together
 * they overlap, and by the time the browser's and tools' files run, what they wait for is long
 * ready. The tools' files end the run: most of them are short, so both workers finish together.
 */
const PROJECT_ORDER = ["worker", "browser", "tools"];

export class ProjectOrderSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = PROJECT_ORDER.indexOf(file.project.name);
      return at === -1 ? PROJECT_ORDER.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
