import { type SourceSet, type SourceSetId, sourceSets } from "../../../src/licences/sources";
import { iconifySet } from "./iconify";
import { lobeIconsSet } from "./lobeIcons";
import { type SimpleIcon, simpleIconsSet } from "./simpleIcons";
import { bbcPsammeadSet, svgFolderSet } from "./svgFiles";
import { theSvgSet } from "./thesvg";
import type { BrandSet } from "./types";

export type { BrandSet, SetLogo } from "./types";
export type { SimpleIcon } from "./simpleIcons";

const source = (id: SourceSetId): SourceSet => sourceSets.find((s) => s.id === id)!;

export interface IconSets {
  /** Every set, in the order of preference of `sourceSets`. */
  all: BrandSet[];
  /** simple-icons' data: brand colours and aliases. */
  simpleIcons: Map<string, SimpleIcon>;
}

/** Reads every bundled brand set from node_modules (about a second). */
export function loadIconSets(): IconSets {
  const simpleIcons = simpleIconsSet(source("simple-icons"));
  const loaders: Record<SourceSetId, () => BrandSet> = {
    "ft-logo-images": () => svgFolderSet(source("ft-logo-images"), "ftLogoImages", "@financial-times/logo-images", "src"),
    "bbc-psammead": () => bbcPsammeadSet(source("bbc-psammead")),
    "iconify-logos": () => iconifySet(source("iconify-logos"), "iconify", "@iconify-json/logos"),
    "lobe-icons": () => lobeIconsSet(source("lobe-icons")),
    devicon: () => iconifySet(source("devicon"), "devicon", "@iconify-json/devicon"),
    "vscode-icons": () => iconifySet(source("vscode-icons"), "vscodeIcons", "@iconify-json/vscode-icons"),
    web3icons: () => iconifySet(source("web3icons"), "web3icons", "@iconify-json/token-branded"),
    "cryptocurrency-icons": () => iconifySet(source("cryptocurrency-icons"), "cryptocurrencyIcons", "@iconify-json/cryptocurrency-color"),
    "simple-icons": () => simpleIcons,
    "coreui-brands": () => iconifySet(source("coreui-brands"), "coreuiBrands", "@iconify-json/cib"),
    "fa6-brands": () => iconifySet(source("fa6-brands"), "fa6Brands", "@iconify-json/fa6-brands"),
    "boxicons-brands": () => iconifySet(source("boxicons-brands"), "boxicons", "@iconify-json/bxl"),
    "file-icons": () => iconifySet(source("file-icons"), "fileIcons", "@iconify-json/file-icons"),
    "streamline-logos": () => iconifySet(source("streamline-logos"), "streamlineLogos", "@iconify-json/streamline-logos"),
    "super-tiny-icons": () => svgFolderSet(source("super-tiny-icons"), "superTinyIcons", "super-tiny-icons", "images/svg"),
    "tabler-brands": () => iconifySet(source("tabler-brands"), "tablerBrands", "@iconify-json/tabler"),
    "css-gg": () => iconifySet(source("css-gg"), "cssGg", "@iconify-json/gg"),
    academicons: () => iconifySet(source("academicons"), "academicons", "@iconify-json/academicons"),
    thesvg: () => theSvgSet(source("thesvg")),
    "springer-nature": () =>
      svgFolderSet(source("springer-nature"), "springerNature", "@springernature/brand-context", "nature/img/favicons"),
    ooui: () => iconifySet(source("ooui"), "ooui", "@iconify-json/ooui"),
  };
  return { all: sourceSets.map((s) => loaders[s.id]()), simpleIcons: simpleIcons.icons };
}
