import { useEffect } from "react";

/** Sets the tab's title while the page is shown: what a person sees among their other tabs. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · OpenComputer`;
  }, [title]);
}
