// A Lit reactive controller that keeps an element subscribed to the store one of its properties
// holds (a RunController, the NotebookController, the upload store): listening while the element
// is connected, moving to a new store when the property changes, and re-rendering on each event.
// The elements used to repeat this by hand in connectedCallback, disconnectedCallback and updated().
import type { ReactiveController, ReactiveControllerHost } from "lit";

/** Per event type, what the element does besides re-rendering (e.g. `{ change: () => {} }`). */
export type StoreHandlers = Readonly<Record<string, () => void>>;

/** Subscribes a host element to the EventTarget that `store()` returns. */
export class StoreSubscription<T extends EventTarget> implements ReactiveController {
  /** The store listened to now; null while the host is disconnected or has none. */
  private current: T | null = null;
  private connected = false;

  /**
   * `store` reads the host's property each time (so a new value is followed on the next update);
   * `handlers` name the events listened to, each run after the host's update is requested.
   */
  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly store: () => T | null | undefined,
    private readonly handlers: StoreHandlers = { change: () => {} },
  ) {
    host.addController(this);
  }

  hostConnected(): void {
    this.connected = true;
    this.follow();
  }

  hostDisconnected(): void {
    this.connected = false;
    this.follow();
  }

  /** After each update, as the elements did in updated(): the property may name another store. */
  hostUpdated(): void {
    this.follow();
  }

  /** Moves the listeners to the store the host holds now, or removes them while disconnected. */
  private follow(): void {
    const next = this.connected ? this.store() ?? null : null;
    if (next === this.current) return;
    for (const type of Object.keys(this.handlers)) this.current?.removeEventListener(type, this.onEvent);
    this.current = next;
    for (const type of Object.keys(this.handlers)) next?.addEventListener(type, this.onEvent);
  }

  // The update is requested first, so that a handler awaiting host.updateComplete sees it rendered.
  private readonly onEvent = (e: Event): void => {
    this.host.requestUpdate();
    this.handlers[e.type]?.();
  };
}
