// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {BountyEscrow} from "../src/BountyEscrow.sol";
import {IBountyEscrow} from "../src/IBountyEscrow.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {MockERC20, FeeOnTransferToken} from "./mocks/Tokens.sol";
import {RejectingReceiver} from "./mocks/Receivers.sol";

/// @notice Drives the escrow with random but well-formed calls from a small cast of actors, in
/// ETH, a plain ERC-20 and a fee-on-transfer token, and mirrors what should be true.
contract EscrowHandler is Common {
    struct Mirror {
        uint256 id;
        IBountyEscrow.Terms t;
        address worker;
        IBountyEscrow.Status status;
        bool terminal;
        uint256 paid; // what left the escrow's books for this bounty: pushed + credited + fees
    }

    BountyEscrow public immutable escrow;
    address public immutable arbiter;
    address public immutable treasury;
    RejectingReceiver public immutable stubborn; // a worker that refuses ETH while it likes
    address[] public tokens;
    address[] public actors; // posters first, then workers
    uint256 private _salts; // each post a new salt
    uint256 public constant POSTERS = 2;

    Mirror[] internal bounties;
    mapping(address token => uint256) public live; // amounts of bounties not yet settled
    bool public terminalLeft; // a terminal bounty moved: must never happen

    constructor(BountyEscrow escrow_, address arbiter_, address treasury_, address[] memory tokens_) {
        escrow = escrow_;
        arbiter = arbiter_;
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
        t.arbiter = arbiter;
        t.deadline = uint64(block.timestamp + bound(duration, 1 hours, 30 days));
        t.reviewWindow = uint32(bound(review, 1 hours, 7 days));
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
            t.token, t.amount, t.arbiter, t.deadline, t.reviewWindow, 0, t.specHash, bytes32(++_salts)
        );
    }

    function claim(uint256 seed, uint256 workerSeed) external {
        Mirror storage m = _pick(seed);
        address w = actors[POSTERS + workerSeed % (actors.length - POSTERS)];
        vm.prank(w);
        try escrow.claim(m.id, m.t, keccak256("agent")) {
            _moved(m, IBountyEscrow.Status.Assigned);
            m.worker = w;
        } catch {}
    }

    function assign(uint256 seed, uint256 workerSeed) external {
        Mirror storage m = _pick(seed);
        address w = actors[POSTERS + workerSeed % (actors.length - POSTERS)];
        vm.prank(m.t.poster);
        try escrow.assign(m.id, m.t, w) {
            _moved(m, IBountyEscrow.Status.Assigned);
            m.worker = w;
        } catch {}
    }

    function submit(uint256 seed) external {
        Mirror storage m = _pick(seed);
        vm.prank(m.worker);
        try escrow.submit(m.id, m.t, m.worker, bytes32(seed)) {
            _moved(m, IBountyEscrow.Status.Submitted);
        } catch {}
    }

    function reject(uint256 seed) external {
        Mirror storage m = _pick(seed);
        vm.prank(m.t.poster);
        try escrow.reject(m.id, m.t, m.worker, 0) {
            _moved(m, IBountyEscrow.Status.Disputed);
        } catch {}
    }

    function dispute(uint256 seed, bool byWorker) external {
        Mirror storage m = _pick(seed);
        vm.prank(byWorker ? m.worker : m.t.poster);
        try escrow.dispute(m.id, m.t, m.worker, 0) {
            _moved(m, IBountyEscrow.Status.Disputed);
        } catch {}
    }

    function cancel(uint256 seed) external {
        Mirror storage m = _pick(seed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.t.poster);
        try escrow.cancel(m.id, m.t) {
            _settled(m, IBountyEscrow.Status.Cancelled, b, o, f);
        } catch {}
    }

    function accept(uint256 seed) external {
        Mirror storage m = _pick(seed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.t.poster);
        try escrow.accept(m.id, m.t, m.worker) {
            _settled(m, IBountyEscrow.Status.Accepted, b, o, f);
        } catch {}
    }

    function release(uint256 seed) external {
        Mirror storage m = _pick(seed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.worker);
        try escrow.release(m.id, m.t, m.worker) {
            _settled(m, IBountyEscrow.Status.Released, b, o, f);
        } catch {}
    }

    function resolve(uint256 seed, uint16 bps) external {
        Mirror storage m = _pick(seed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(arbiter);
        try escrow.resolve(m.id, m.t, m.worker, uint16(bound(bps, 0, 10_000))) {
            _settled(m, IBountyEscrow.Status.Resolved, b, o, f);
        } catch {}
    }

    function resolveExpired(uint256 seed) external {
        Mirror storage m = _pick(seed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        vm.prank(m.t.poster);
        try escrow.resolveExpired(m.id, m.t, m.worker) {
            _settled(m, IBountyEscrow.Status.Resolved, b, o, f);
        } catch {}
    }

    function refund(uint256 seed) external {
        Mirror storage m = _pick(seed);
        (uint256 b, uint256 o, uint256 f) = _books(m);
        try escrow.refund(m.id, m.t, m.worker) {
            _settled(m, IBountyEscrow.Status.Refunded, b, o, f);
        } catch {}
    }

    function withdraw(uint256 actorSeed, uint256 tokenSeed) external {
        vm.prank(actors[actorSeed % actors.length]);
        try escrow.withdraw(tokens[tokenSeed % tokens.length]) {} catch {}
    }

    function withdrawFees(uint256 tokenSeed) external {
        vm.prank(treasury);
        try escrow.withdrawFees(tokens[tokenSeed % tokens.length]) {} catch {}
    }

    function setStubborn(bool refusing) external {
        stubborn.setRefusing(refusing);
    }

    function warp(uint256 dt) external {
        vm.warp(block.timestamp + bound(dt, 0, 10 days));
    }

    // --- bookkeeping ---

    function _pick(uint256 seed) internal returns (Mirror storage) {
        if (bounties.length == 0) this.post(seed, seed >> 8, seed >> 16, seed >> 24, seed >> 32);
        return bounties[seed % bounties.length];
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
/// terminal.
contract BountyEscrowInvariantTest is Test {
    EscrowHandler internal handler;
    BountyEscrow internal escrow;

    function setUp() public {
        vm.warp(1_700_000_000);
        address owner = makeAddr("owner");
        address treasury = makeAddr("treasury");
        StakeRegistry registry = new StakeRegistry(address(0), 7 days, owner);
        escrow = new BountyEscrow(registry, owner, treasury, 250);
        address[] memory tokens = new address[](3);
        tokens[0] = address(0);
        tokens[1] = address(new MockERC20("Test", "TST"));
        tokens[2] = address(new FeeOnTransferToken(300));
        handler = new EscrowHandler(escrow, makeAddr("arbiter"), treasury, tokens);
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
}

