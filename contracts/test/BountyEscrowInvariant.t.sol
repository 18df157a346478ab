// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {BountyEscrow} from "../src/BountyEscrow.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";
import {MockERC20, FeeOnTransferToken} from "./mocks/Tokens.sol";
import {RejectingReceiver} from "./mocks/Receivers.sol";

/// @notice Drives the escrow with random but well-formed calls from a small cast of actors, in
/// ETH, a plain ERC-20 and a fee-on-transfer token, with and without a minimum stake, two
/// arbiters and two agent ids per worker, and mirrors what should be true. Calls are not
/// wrapped in try/catch: a call the escrow refuses reverts the handler call, its bookkeeping
/// included, and forge counts it in the run's "reverts" (the revert rate of the campaign).
contract EscrowHandler is Common {
    struct Mirror {
        uint256 id;
        IBountyEscrow.Terms t;
        address worker;
        bytes32 agent; // the agent the worker claimed with (zero: assigned, nothing locked)
        IBountyEscrow.Status status;
        bool terminal;
        uint256 paid; // what left the escrow's books for this bounty: pushed + credited + fees
    }

    BountyEscrow public immutable escrow;
    StakeRegistry public immutable registry;
    address[2] public arbiters = [address(0xA1B1), address(0xA2B2)];
    bytes32[2] public agents = [keccak256("did:key:agent-one"), keccak256("did:key:agent-two")];
    address public immutable treasury;
    RejectingReceiver public immutable stubborn; // a worker that refuses ETH while it likes
    address[] public tokens;
    address[] public actors; // posters first, then workers
    uint256 private _salts; // each post a new salt
    uint256 public constant POSTERS = 2;

    Mirror[] internal bounties;
    mapping(address token => uint256) public live; // amounts of bounties not yet settled
    bool public terminalLeft; // a terminal bounty moved: must never happen
    bool public slashAboveLock; // a ruling took more stake than the bounty locked: never
    uint256 public claimsLocked; // claims that locked stake (the campaign reaches the locks)
    uint256 public slashes; // rulings that slashed
    uint256 public unclaims; // workers the poster sent away
    bool public unclaimedOutOfTurn; // an unclaim took a submitted job or a staked claim: never

    constructor(BountyEscrow escrow_, address treasury_, address[] memory tokens_) {
        escrow = escrow_;
        registry = StakeRegistry(address(escrow_.stakeRegistry()));
        treasury = treasury_;
        tokens = tokens_;
        stubborn = new RejectingReceiver();
        actors.push(address(0xA11CE));
        actors.push(address(0xB0B));
        actors.push(address(0xCAFE));
        actors.push(address(0xD00D));
        actors.push(address(stubborn));
        for (uint256 i = 0; i < POSTERS; i++) {
            vm.deal(actors[i], 1e9 ether);
            for (uint256 j = 1; j < tokens.length; j++) {
                MockERC20(tokens[j]).mint(actors[i], 1e9 ether);
                vm.prank(actors[i]);
                MockERC20(tokens[j]).approve(address(escrow), type(uint256).max);
            }
        }
        // Every worker binds both agents and stakes a little on each, so claims with a
        // minimum stake succeed at first and fail once the stake is locked up.
        for (uint256 i = POSTERS; i < actors.length; i++) {
            vm.deal(actors[i], 1e9 ether);
            for (uint256 a = 0; a < 2; a++) {
                vm.startPrank(actors[i]);
                registry.bind(agents[a], "");
                registry.stake{value: 3 ether}(agents[a], 3 ether);
                vm.stopPrank();
            }
        }
    }

    // --- views for the invariants ---

    function count() external view returns (uint256) {
        return bounties.length;
    }

    function bounty(uint256 i) external view returns (Mirror memory) {
        return bounties[i];
    }

    function tokenCount() external view returns (uint256) {
        return tokens.length;
    }

    function actorCount() external view returns (uint256) {
        return actors.length;
    }

    // --- actions ---

    function post(uint256 posterSeed, uint256 tokenSeed, uint256 amount, uint256 duration, uint256 review) external {
        IBountyEscrow.Terms memory t;
        t.poster = actors[posterSeed % POSTERS];
        t.token = tokens[tokenSeed % tokens.length];
        t.amount = bound(amount, 1, 1_000 ether);
        t.arbiter = arbiters[(posterSeed >> 8) % 2];
        // Half the bounties lock stake from their claimer, up to 2 ETH.
        t.minStake = (review >> 8) % 2 == 0 ? 0 : bound(review >> 16, 1, 2 ether);
        t.deadline = uint64(block.timestamp + bound(duration, 1 days, 30 days));
        t.reviewWindow = uint32(bound(review, 1 days, 7 days));
        t.feeBps = escrow.feeBps();
        t.specHash = bytes32(amount);
        uint256 before = _balance(t.token);
        uint256 id = _post(t);
        t.amount = _balance(t.token) - before; // what arrived is what the terms record
        bounties.push();
        Mirror storage m = bounties[bounties.length - 1];
        m.id = id;
        m.t = t;
        live[t.token] += t.amount;
    }

    function _post(IBountyEscrow.Terms memory t) internal returns (uint256) {
        vm.prank(t.poster);
        return escrow.post{value: t.token == address(0) ? t.amount : 0}(
            t.token, t.amount, t.arbiter, t.deadline, t.reviewWindow, t.minStake, t.specHash, bytes32(++_salts)
        );
    }

    function claim(uint256 seed, uint256 workerSeed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Open);
        address w = actors[POSTERS + workerSeed % (actors.length - POSTERS)];
        bytes32 agent = agents[(workerSeed >> 8) % 2];
        vm.prank(w);
        escrow.claim(m.id, m.t, agent);
        _moved(m, IBountyEscrow.Status.Assigned);
        m.worker = w;
        if (m.t.minStake != 0) {
            m.agent = agent;
            claimsLocked++;
        }
    }

    function unbond(uint256 workerSeed, uint256 amount) external {
        address w = actors[POSTERS + workerSeed % (actors.length - POSTERS)];
        bytes32 agent = agents[(workerSeed >> 8) % 2];
        vm.prank(w);
        registry.requestUnbond(agent, bound(amount, 1, 3 ether));
    }

    function assign(uint256 seed, uint256 workerSeed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Open);
        address w = actors[POSTERS + workerSeed % (actors.length - POSTERS)];
        vm.prank(m.t.poster);
        escrow.assign(m.id, m.t, w);
        _moved(m, IBountyEscrow.Status.Assigned);
        m.worker = w;
    }

    /// @notice The poster waits up to two claim windows (the campaign is too shallow for the
    /// warps alone to pass one often) and sends away a worker that has not submitted within
    /// the window: the bounty is open again with nobody's stake locked and nothing paid (the
    /// balance and lock invariants hold it to that); later claims, assignments or a cancel end
    /// it as any other. One time in four it tries a submitted bounty, which must revert.
    function unclaim(uint256 seed, uint256 wait) external {
        IBountyEscrow.Status want = wait % 4 == 0 ? IBountyEscrow.Status.Submitted : IBountyEscrow.Status.Assigned;
        Mirror storage m = _pickUnstakedIn(seed, want);
        vm.warp(block.timestamp + bound(wait >> 2, 0, 2 * escrow.CLAIM_WINDOW()));
        vm.prank(m.t.poster);
        escrow.unclaim(m.id, m.t, m.worker);
        if (m.status != IBountyEscrow.Status.Assigned || m.t.minStake != 0) unclaimedOutOfTurn = true;
        _moved(m, IBountyEscrow.Status.Open);
        m.worker = address(0);
        m.agent = 0;
        unclaims++;
    }

    function submit(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Assigned);
        vm.prank(m.worker);
        escrow.submit(m.id, m.t, m.worker, bytes32(seed));
        _moved(m, IBountyEscrow.Status.Submitted);
    }

    function reject(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Submitted);
        vm.prank(m.t.poster);
        escrow.reject(m.id, m.t, m.worker, 0);
        _moved(m, IBountyEscrow.Status.Disputed);
    }

    function dispute(uint256 seed, bool byWorker) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Submitted);
        vm.prank(byWorker ? m.worker : m.t.poster);
        escrow.dispute(m.id, m.t, m.worker, 0);
        _moved(m, IBountyEscrow.Status.Disputed);
    }

    function cancel(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Open);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.t.poster);
        escrow.cancel(m.id, m.t);
        _settled(m, IBountyEscrow.Status.Cancelled, b, o, f);
    }

    function accept(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Submitted);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.t.poster);
        escrow.accept(m.id, m.t, m.worker);
        _settled(m, IBountyEscrow.Status.Accepted, b, o, f);
    }

    function release(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Submitted);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.worker);
        escrow.release(m.id, m.t, m.worker);
        _settled(m, IBountyEscrow.Status.Released, b, o, f);
    }

    function resolve(uint256 seed, uint256 bps) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Disputed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        uint256 slash = m.agent == 0 ? 0 : bound(bps >> 16, 0, m.t.minStake);
        uint256 stakedBefore = m.agent == 0 ? 0 : registry.recordOf(m.agent, m.worker).staked;
        vm.prank(m.t.arbiter);
        escrow.resolve(m.id, m.t, m.worker, uint16(bound(bps, 0, 10_000)), slash);
        if (m.agent != 0 && stakedBefore - registry.recordOf(m.agent, m.worker).staked > m.t.minStake) {
            slashAboveLock = true;
        }
        if (slash != 0) slashes++;
        _settled(m, IBountyEscrow.Status.Resolved, b, o, f);
    }

    function resolveExpired(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Disputed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.t.poster);
        escrow.resolveExpired(m.id, m.t, m.worker);
        _settled(m, IBountyEscrow.Status.Resolved, b, o, f);
    }

    function refund(uint256 seed) external {
        Mirror storage m = _pickIn(seed, IBountyEscrow.Status.Assigned);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        escrow.refund(m.id, m.t, m.worker);
        _settled(m, IBountyEscrow.Status.Refunded, b, o, f);
    }

    function withdraw(uint256 actorSeed, uint256 tokenSeed) external {
        vm.prank(actors[actorSeed % actors.length]);
        escrow.withdraw(tokens[tokenSeed % tokens.length]);
    }

    function withdrawFees(uint256 tokenSeed) external {
        vm.prank(treasury);
        escrow.withdrawFees(tokens[tokenSeed % tokens.length]);
    }

    function setStubborn(bool refusing) external {
        stubborn.setRefusing(refusing);
    }

    /// @notice Mostly hours, so bounties live through several calls; one time in eight up to
    /// 40 days, past deadlines, review windows and the arbiter timeout.
    function warp(uint256 dt) external {
        vm.warp(block.timestamp + (dt % 8 == 0 ? bound(dt >> 3, 0, 40 days) : bound(dt >> 3, 0, 12 hours)));
    }

    // --- bookkeeping ---

    /// @notice The stake bounties still hold locked on (worker, agent), by the mirror.
    function lockedOn(address worker, bytes32 agent) external view returns (uint256 sum) {
        for (uint256 i = 0; i < bounties.length; i++) {
            Mirror storage m = bounties[i];
            if (!m.terminal && m.worker == worker && m.agent == agent) sum += m.t.minStake;
        }
    }

    function _pick(uint256 seed) internal returns (Mirror storage) {
        if (bounties.length == 0) this.post(seed, seed >> 8, seed >> 16, seed >> 24, seed >> 32);
        return bounties[seed % bounties.length];
    }

    /// @dev Mostly a bounty in `want` (the status the action needs), found from a random
    /// start; one time in eight, or when none is, any bounty (so wrong-status calls are
    /// still made, and must revert). Without this, most calls hit a bounty in the wrong
    /// status and the campaign spends its depth on reverts.
    function _pickIn(uint256 seed, IBountyEscrow.Status want) internal returns (Mirror storage) {
        Mirror storage any = _pick(seed);
        if ((seed >> 128) % 8 == 0) return any;
        uint256 n = bounties.length;
        for (uint256 k = 0; k < n; k++) {
            Mirror storage m = bounties[(seed + k) % n];
            if (!m.terminal && m.status == want) return m;
        }
        return any;
    }

    /// @dev As _pickIn, preferring a bounty without a minimum stake (the only kind an unclaim
    /// may move; the others are still tried when no such bounty is in `want`).
    function _pickUnstakedIn(uint256 seed, IBountyEscrow.Status want) internal returns (Mirror storage) {
        Mirror storage any = _pickIn(seed, want);
        if ((seed >> 128) % 8 == 0) return any;
        uint256 n = bounties.length;
        for (uint256 k = 0; k < n; k++) {
            Mirror storage m = bounties[(seed + k) % n];
            if (!m.terminal && m.status == want && m.t.minStake == 0) return m;
        }
        return any;
    }

    function _balance(address token) internal view returns (uint256) {
        return token == address(0) ? address(escrow).balance : MockERC20(token).balanceOf(address(escrow));
    }

    /// @dev The escrow's books as they concern bounty m: its balance in m's token, what it owes
    /// m's poster and worker, and the fees it owes.
    function _books(Mirror storage m) internal view returns (uint256 bal, uint256 owedParties, uint256 fees) {
        address token = m.t.token;
        bal = _balance(token);
        owedParties = escrow.owed(m.t.poster, token) + (m.worker == address(0) ? 0 : escrow.owed(m.worker, token));
        fees = escrow.feesOwed(token);
    }

    function _moved(Mirror storage m, IBountyEscrow.Status next) internal {
        if (m.terminal) terminalLeft = true;
        m.status = next;
    }

    function _settled(Mirror storage m, IBountyEscrow.Status next, uint256 bal, uint256 owedParties, uint256 fees)
        internal
    {
        (uint256 bal2, uint256 owed2, uint256 fees2) = _books(m);
        m.paid += (bal - bal2) + (owed2 - owedParties) + (fees2 - fees);
        _moved(m, next);
        m.terminal = true;
        live[m.t.token] -= m.t.amount;
    }
}

/// @notice Invariants: the escrow's balance in every token equals what it still owes; no bounty
/// pays out more than was posted (a settled one pays out exactly that); terminal states stay
/// terminal; claims' locks follow them; an unclaim takes only an unsubmitted, unstaked claim.
contract BountyEscrowInvariantTest is Test {
    EscrowHandler internal handler;
    BountyEscrow internal escrow;

    function setUp() public {
        vm.warp(1_700_000_000);
        address owner = makeAddr("owner");
        address treasury = makeAddr("treasury");
        escrow = new BountyEscrow(owner, treasury, 250, address(0), 7 days, 0.1 ether, address(0));
        address[] memory tokens = new address[](3);
        tokens[0] = address(0);
        tokens[1] = address(new MockERC20("Test", "TST"));
        tokens[2] = address(new FeeOnTransferToken(300));
        handler = new EscrowHandler(escrow, treasury, tokens);
        targetContract(address(handler));
    }

    function invariant_balanceEqualsWhatIsOwed() public view {
        for (uint256 j = 0; j < handler.tokenCount(); j++) {
            address token = handler.tokens(j);
            uint256 owed = escrow.feesOwed(token) + handler.live(token);
            for (uint256 a = 0; a < handler.actorCount(); a++) {
                owed += escrow.owed(handler.actors(a), token);
            }
            uint256 bal = token == address(0) ? address(escrow).balance : MockERC20(token).balanceOf(address(escrow));
            vm.assertEq(bal, owed, "balance == live bounties + credits + fees");
        }
    }

    function invariant_noBountyPaysMoreThanPosted() public view {
        for (uint256 i = 0; i < handler.count(); i++) {
            EscrowHandler.Mirror memory m = handler.bounty(i);
            vm.assertLe(m.paid, m.t.amount, "paid out <= posted");
            if (m.terminal) vm.assertEq(m.paid, m.t.amount, "a settled bounty pays out exactly what was posted");
        }
    }

    function invariant_terminalStatesStayTerminal() public view {
        vm.assertFalse(handler.terminalLeft(), "a call moved a settled bounty");
        for (uint256 i = 0; i < handler.count(); i++) {
            EscrowHandler.Mirror memory m = handler.bounty(i);
            vm.assertEq(uint256(escrow.bountyOf(m.id).status), uint256(m.status), "contract agrees with the mirror");
        }
    }

    /// A worker that submitted keeps its job, and a claim that locked stake holds until the
    /// bounty ends: unclaim moves only an assigned bounty without a minimum stake.
    function invariant_unclaimOnlyUnsubmittedUnstakedClaims() public view {
        vm.assertFalse(handler.unclaimedOutOfTurn(), "an unclaim took a submitted job or a staked claim");
    }

    /// Claims lock their bounty's minimum stake until the bounty ends: every record's locked
    /// stake is what its open claimed bounties locked and never more than its stake; a terminal
    /// bounty holds no lock; no ruling slashed more than its lock.
    function invariant_locksFollowOpenClaims() public view {
        vm.assertFalse(handler.slashAboveLock(), "a slash exceeded its lock");
        StakeRegistry registry = handler.registry();
        for (uint256 i = 0; i < handler.count(); i++) {
            EscrowHandler.Mirror memory m = handler.bounty(i);
            bytes32 held = registry.lockedAgent(m.id);
            if (m.terminal || m.agent == 0) vm.assertEq(held, bytes32(0), "no lock after the end or without a claim");
            else vm.assertEq(held, m.agent, "an open claim holds its lock");
        }
        for (uint256 a = handler.POSTERS(); a < handler.actorCount(); a++) {
            for (uint256 k = 0; k < 2; k++) {
                IStakeRegistry.Record memory r = registry.recordOf(handler.agents(k), handler.actors(a));
                vm.assertLe(r.locked, r.staked, "locked <= staked");
                vm.assertEq(r.locked, handler.lockedOn(handler.actors(a), handler.agents(k)), "locked == open claims");
            }
        }
    }
}
