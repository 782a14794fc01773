// event.fire: append one user event to the ring. The shape is checked again here: the state
// machine must not trust a log entry. Filters are regular expressions checked at the HTTP edge
// (a JS RegExp must never decide whether a replicated command applies).
import { CommandError } from '../command-error';
import type { CommandHandler } from '../fsm/command-handler';
import { optObject, str } from '../input-fields';
import type { EventInput, EventOut } from './event-records';

export interface EventFireCommand {
  event: EventInput;
}

export const eventFire: CommandHandler<EventFireCommand> = (state, cmd) => {
  const e = optObject(cmd.event, 'event');
  if (!e) return new CommandError('Invalid field event: expected an object');
  const input: EventInput = {
    ID: str(e, 'ID', 'event'),
    Name: str(e, 'Name', 'event'),
    Payload: e.Payload === null || e.Payload === undefined ? null : str(e, 'Payload', 'event'),
    NodeFilter: str(e, 'NodeFilter', 'event'),
    ServiceFilter: str(e, 'ServiceFilter', 'event'),
    TagFilter: str(e, 'TagFilter', 'event'),
  };
  if (input.ID === '') return new CommandError('Missing event ID');
  if (input.Name === '') return new CommandError('User event missing name');
  if (input.TagFilter !== '' && input.ServiceFilter === '') return new CommandError('cannot provide tag filter without service filter');
  return (txn): EventOut => state.events.fire(input, txn);
};
