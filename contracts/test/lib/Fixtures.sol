// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./Test.sol";
import {BountyEscrow} from "../../src/BountyEscrow.sol";
import {IBountyEscrow} from "../../src/IBountyEscrow.sol";
import {StakeRegistry} from "../../src/StakeRegistry.sol";
import {MockERC20} from "../mocks/Tokens.sol";

/// @notice A deployed escrow and registry with funded actors, and helpers that walk a bounty
/// through its life.
abstract contract EscrowFixture is Test {
    uint16 internal constant FEE_BPS = 100; // 1%
    uint64 internal constant UNBOND_DELAY = 7 days;
    uint256 internal constant MIN_STAKE = 0.1 ether;
    uint32 internal constant REVIEW = 3 days;
    uint64 internal constant DURATION = 10 days;
    uint256 internal constant START = 1_700_000_000;

    BountyEscrow internal escrow;
    StakeRegistry internal registry;
    MockERC20 internal token;

    address internal owner = makeAddr("owner");
    address internal treasury = makeAddr("treasury");
    address internal poster = makeAddr("poster");
    address internal worker = makeAddr("worker");
    address internal arbiter = makeAddr("arbiter");
    address internal stranger = makeAddr("stranger");
    address internal jobLocker = makeAddr("jobLocker");

    bytes32 internal constant SPEC = keccak256("spec: summarize the paper");
    /// @notice A salt for posts made through contracts that the test names by hand.
    bytes32 internal constant SALT = keccak256("salt");

    uint256 private _salts;

    /// @notice A salt not used before in this test: each post is a new bounty.
    function nextSalt() internal returns (bytes32) {
        return keccak256(abi.encode("salt", ++_salts));
    }
    bytes32 internal constant RESULT = keccak256("result: the summary");
    bytes32 internal constant AGENT = keccak256("did:key:z6MkworkerAgent");

    function setUp() public virtual {
        vm.warp(START);
        escrow = new BountyEscrow(owner, treasury, FEE_BPS, address(0), UNBOND_DELAY, MIN_STAKE, jobLocker);
        registry = StakeRegistry(address(escrow.stakeRegistry()));
        token = new MockERC20("Test", "TST");
        vm.deal(poster, 1_000_000 ether);
        vm.deal(worker, 1_000 ether);
        token.mint(poster, 1_000_000 ether);
        vm.prank(poster);
        token.approve(address(escrow), type(uint256).max);
    }

    /// @dev The terms a post by `from` with these arguments is recorded with.
    function termsOf(address from, address tok, uint256 amount, uint256 minStake)
        internal
        view
        returns (IBountyEscrow.Terms memory)
    {
        return IBountyEscrow.Terms({
            poster: from,
            token: tok,
            amount: amount,
            arbiter: arbiter,
            deadline: uint64(block.timestamp) + DURATION,
            reviewWindow: REVIEW,
            feeBps: escrow.feeBps(),
            minStake: minStake,
            specHash: SPEC
        });
    }

    function postETH(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        return postETHWithStake(amount, 0);
    }

    function postETHWithStake(uint256 amount, uint256 minStake)
        internal
        returns (uint256 id, IBountyEscrow.Terms memory t)
    {
        t = termsOf(poster, address(0), amount, minStake);
        vm.prank(poster);
        id = escrow.post{value: amount}(address(0), amount, arbiter, t.deadline, REVIEW, minStake, SPEC, nextSalt());
    }

    function postToken(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        t = termsOf(poster, address(token), amount, 0);
        vm.prank(poster);
        id = escrow.post(address(token), amount, arbiter, t.deadline, REVIEW, 0, SPEC, nextSalt());
    }

    function claimed(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        (id, t) = postETH(amount);
        vm.prank(worker);
        escrow.claim(id, t, AGENT);
    }

    function submitted(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        (id, t) = claimed(amount);
        vm.prank(worker);
        escrow.submit(id, t, worker, RESULT);
    }

    function disputed(uint256 amount) internal returns (uint256 id, IBountyEscrow.Terms memory t) {
        (id, t) = submitted(amount);
        vm.prank(poster);
        escrow.reject(id, t, worker, keccak256("wrong"));
    }

    function statusOf(uint256 id) internal view returns (IBountyEscrow.Status) {
        return escrow.bountyOf(id).status;
    }

    function assertStatus(uint256 id, IBountyEscrow.Status want) internal view {
        vm.assertEq(uint256(statusOf(id)), uint256(want), "status");
    }

    function wrongStatus(uint256 id, IBountyEscrow.Status s) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IBountyEscrow.WrongStatus.selector, id, s);
    }

    function feeOf(uint256 amount) internal pure returns (uint256) {
        return amount * FEE_BPS / 10_000;
    }
}
