/**
 * Text made safe inside HTML or XML markup, in element content and in quoted attributes alike.
 * For markup built as a string (an SVG, a snippet a user copies): JSX escapes on its own.
 */
export const escapeMarkup = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
